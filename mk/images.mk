# Container images built with buildah, without a Docker daemon (see docs/kubernetes.md, "Images").
# The root Makefile includes mk/*.mk and defines CACHE.
IMAGES_CACHE := $(CACHE)/images
# vfs storage and chroot isolation work as root on a plain VM or CI runner (no overlayfs, no user namespaces).
BUILDAH      := buildah --root $(CACHE)/containers/storage --runroot $(CACHE)/containers/run --storage-driver vfs
# local: Debian bases made here with debootstrap (no registry needed); public: python:3.11-slim and node:20-slim.
IMAGE_BASES  ?= local
IMAGE_TAG    ?= dev
IMAGES       ?= api runner operator postgresql nats

.PHONY: images images-tools images-load test-images

images-tools:
	@command -v buildah >/dev/null 2>&1 && command -v debootstrap >/dev/null 2>&1 || { \
	  echo "==> installing buildah and debootstrap from Debian's packages"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah debootstrap >/dev/null; }

images: images-tools ## Build localhost/konnectz-{api,runner,operator,postgresql,nats}:$(IMAGE_TAG) with buildah (cached)
	BUILDAH="$(BUILDAH)" KONNECTZ_IMAGES_CACHE="$(IMAGES_CACHE)" IMAGE_BASES=$(IMAGE_BASES) IMAGE_TAG=$(IMAGE_TAG) \
	  IMAGES="$(IMAGES)" docker/build-images

# `make test`: the images tests/k8s/test_images.py starts, built before the tests (unchanged inputs: tagged
# again in seconds). buildah with vfs and chroot needs root; without it the test is skipped.
test-images: images-tools
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory images; \
	else echo "==> not root: the images are not built and tests/k8s/test_images.py is skipped"; fi

# Into a node's containerd (no registry): each image pushed to an OCI archive (kept under $(IMAGES_CACHE)/oci per
# image id) and imported into the namespace the kubelet uses, also named as the chart's defaults name it
# (docker/load-images says more). e.g. make images-load CONTAINERD_ADDRESS=/run/containerd/containerd.sock
CONTAINERD_ADDRESS   ?=
CONTAINERD_NAMESPACE ?= k8s.io
images-load: images
	BUILDAH="$(BUILDAH)" KONNECTZ_IMAGES_CACHE="$(IMAGES_CACHE)" IMAGE_TAG=$(IMAGE_TAG) IMAGES="$(IMAGES)" \
	  CONTAINERD_ADDRESS="$(CONTAINERD_ADDRESS)" CONTAINERD_NAMESPACE="$(CONTAINERD_NAMESPACE)" docker/load-images
