# Local Kubernetes control plane built from Go modules (see tests/cluster/README.md).
# The root Makefile includes mk/*.mk and defines PY (.venv/bin/python).
PY ?= .venv/bin/python

.PHONY: cluster-build cluster-up cluster-down cluster-status test-k8s

cluster-build: ## Build/cache kube-apiserver, controller-manager, scheduler, kubectl, etcd, helm, kwok
	tests/cluster/build

cluster-up: .venv/.installed cluster-build ## Start the control plane; kubeconfig in .konnectz/kubeconfig
	PYTHON=$(PY) tests/cluster/up

cluster-down: .venv/.installed ## Stop the control plane (safe to repeat)
	PYTHON=$(PY) tests/cluster/down

cluster-status: .venv/.installed ## Show pids, RSS and readiness of the control plane
	$(PY) tests/cluster/controlplane.py status

test-k8s: .venv/.installed cluster-build ## Tests against a real control plane (starts its own unless KUBECONFIG points at a live one)
	$(PY) -m pytest tests/k8s
