# A real node beside the test control plane: containerd, runc, the CNI plugins, the kubelet and
# kube-proxy (see docs/real-node.md). The root Makefile includes mk/*.mk and defines PY.
PY ?= .venv/bin/python
NODE_PACKAGES := containerd runc containernetworking-plugins iptables conntrack busybox-static

.PHONY: node-tools node-up node-down

# Debian's packages, installed when one of their commands is missing (as images-tools does for buildah).
# busybox-static: the one-binary image the real-node tests run (and the pods' sandbox, "pause").
node-tools:
	@command -v containerd >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1 && command -v runc >/dev/null 2>&1 \
	  && [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] \
	  && [ -x /usr/lib/cni/portmap ] && command -v iptables >/dev/null 2>&1 && command -v conntrack >/dev/null 2>&1 \
	  && [ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx httpd || { \
	  echo "==> installing $(NODE_PACKAGES) from Debian's packages"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(NODE_PACKAGES) >/dev/null; }

node-up: .venv/.installed cluster-build node-tools ## Start a control plane and a real node (containerd + kubelet + kube-proxy); kubeconfig in .konnectz/realnode/kubeconfig
	PYTHON=$(PY) tests/cluster/node-up

node-down: .venv/.installed ## Stop the real node and its control plane; nothing is left behind (safe to repeat)
	PYTHON=$(PY) tests/cluster/node-down
