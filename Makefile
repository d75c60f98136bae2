# Konnectz — the two commands: `make dev` and `make test`. Everything else supports them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

CACHE      ?= $(HOME)/.cache/konnectz
TOOLS      := $(CACHE)/tools
UV         := $(TOOLS)/bin/uv
UV_VERSION := 0.13.9
PY         := .venv/bin/python
# pytest-xdist workers for `make test`: each has its own PostgreSQL, NATS, SMTP sink and platform;
# the Kubernetes tests share one worker (one control plane). Most tests wait on I/O, so 3 on 2 cores.
PYTEST_WORKERS ?= 3
# Every tool and test reads the same cache (uv, the catalogue's package, Prism, the control plane).
export KONNECTZ_CACHE := $(CACHE)
export UV_PYTHON_DOWNLOADS := never
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

PY_LOCKS   := pyproject.toml uv.lock api/pyproject.toml contracts/pyproject.toml runner/pyproject.toml operator/pyproject.toml devstack/pyproject.toml tools/pyproject.toml

.PHONY: help install dev ai-host test lint check-imports typecheck web-build web-check gen-types check-types gen-crd check-crd nats-auth unit bench clean chromium

help:
	@echo "make dev    - install what is needed and run Konnectz on http://127.0.0.1:8080"
	@echo "make test   - install what is needed and run every check (lint, types, unit, integration, k8s, e2e)"
	@echo "make gen-types - regenerate web/src/api/schema.d.ts from the api's OpenAPI document"
	@echo "make gen-crd   - regenerate the Konnect CRD (crds/ and the chart) from konnectz_contracts.resource"
	@echo "make nats-auth - regenerate the chart's NATS users and permissions from konnectz_contracts.nats_auth"
	@echo "make images    - build every image of the chart (api, runner, operator, PostgreSQL, NATS) with buildah (no Docker daemon)"
	@echo "make images-load CONTAINERD_ADDRESS=SOCKET - import them into a containerd (a node without a registry)"
	@echo "make bench     - api reads on a large seeded database, api writes under load (docs/flows.md), the runner under webhook load (docs/performance.md), the operator"

# --- installation -------------------------------------------------------------------------
$(UV):
	@echo "==> installing uv $(UV_VERSION) into $(TOOLS) (about 10 s)"
	python3 -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

.venv/.installed: $(UV) $(PY_LOCKS)
	@echo "==> installing the Python workspace into .venv (about 20 s with uv's cache warm, 1-2 min without)"
	$(UV) sync --all-packages --frozen --quiet --compile-bytecode
	@touch $@

web/node_modules/.installed: web/package.json web/package-lock.json
	@echo "==> installing the web packages (about 30 s with npm's cache warm, 1-2 min without)"
	cd web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Bytecode compiled once, not at every process start: where PYTHONDONTWRITEBYTECODE is set (CI, these
# machines) Python would otherwise compile every module it imports in every api, runner and test
# process (about half of a process's start-up CPU). The libraries are compiled by `uv sync` above; the
# workspace's own sources here, incrementally (well under a second when nothing changed).
install: .venv/.installed web/node_modules/.installed
	@$(PY) -m compileall -q -j 0 api/src runner/src contracts/src operator/src devstack/src tools >/dev/null

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "==> installing Chromium from Debian's packages"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

web/dist/index.html: web/node_modules/.installed $(shell find web/src web/public web/index.html web/vite.config.ts -type f 2>/dev/null)
	@echo "==> building the web app into web/dist (about 20 s)"
	cd web && npm run build --silent
	@touch $@

web-build: web/dist/index.html

# --- the platform -------------------------------------------------------------------------
# `make dev AI=flowise` also starts the optional AI host (install it once with `make ai-host`);
# `make dev AI=scripted` the scripted model server for Ask AI without a key (docs/ai.md).
dev: install web-build catalogue
	$(PY) -m konnectz_devstack $(if $(AI),--ai $(AI),)

# The optional AI host: Flowise and the Node 24 it needs, both from the npm registry.
ai-host: install
	$(PY) -c "import subprocess; from konnectz_devstack._aihost import install_args, ai_host_dir; ai_host_dir().mkdir(parents=True, exist_ok=True); subprocess.run(install_args(), check=True)"

# --- checks -------------------------------------------------------------------------------
# The import graph: no cycle within a package, no first-party import hidden in a function
# (tools/check_imports.py, over every konnectz_* package found under */src/).
check-imports: .venv/.installed
	$(PY) tools/check_imports.py

lint: .venv/.installed check-imports
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

typecheck: .venv/.installed
	.venv/bin/mypy

gen-types: install
	@mkdir -p .konnectz
	$(PY) -m konnectz_api openapi -o .konnectz/openapi.json
	cd web && npx --no-install openapi-typescript ../.konnectz/openapi.json -o src/api/schema.d.ts --default-non-nullable false --silent

check-types: install
	@mkdir -p .konnectz
	$(PY) -m konnectz_api openapi -o .konnectz/openapi.check.json
	cd web && npx --no-install openapi-typescript ../.konnectz/openapi.check.json -o ../.konnectz/schema.check.d.ts --default-non-nullable false --silent
	@diff -q web/src/api/schema.d.ts .konnectz/schema.check.d.ts >/dev/null || { \
	  echo "web/src/api/schema.d.ts is stale: run 'make gen-types' and commit it"; exit 1; }
	@echo "generated API types are up to date"

gen-crd: .venv/.installed
	$(PY) -m konnectz_operator crd

check-crd: .venv/.installed
	$(PY) -m konnectz_operator crd --check

# runner/tests/test_nats_auth.py fails when the chart's file differs from what this writes.
nats-auth: .venv/.installed
	$(PY) -m konnectz_contracts.nats_auth > charts/konnectz/files/nats-authorization.conf

# The initial script's budget reads web/dist: web-check depends on the build, so it checks a fresh one.
web-check: web/node_modules/.installed web/dist/index.html
	cd web && npm run typecheck --silent && npm run lint --silent && npm run test --silent && npm run check:size --silent && npm run check:cycles --silent

test: install chromium web-build cluster-build node-tools catalogue catalogue-mocks test-images lint typecheck check-types check-crd check-catalogue web-check
	$(PY) -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadgroup

# Benchmarks: tests/bench (api, KONNECTZ_BENCH=1) and bench_*.py files with bench_* functions in
# tests/k8s (the operator); `make test` never runs them.
bench: install cluster-build
	KONNECTZ_BENCH=1 $(PY) -m pytest -q tests/bench -p no:cacheprovider -s
	$(PY) -m pytest -q -p no:cacheprovider -s -o python_files='bench_*.py' -o python_functions='bench_*' tests/k8s

clean:
	rm -rf .venv web/node_modules web/dist .konnectz/openapi*.json .konnectz/*.check.*

-include mk/*.mk
