"""A real node: pods that really run (containerd + runc + CNI, the kubelet and kube-proxy built here).

The node and a control plane of its own are started once for this module (``tests/cluster/node.py``,
docs/real-node.md) in a network namespace of their own; the kwok tests' control plane never sees
this node, and the node is tainted ``konnectz.io/real-node:NoSchedule`` besides, so only a pod that
tolerates it lands there. Needs root (skipped otherwise); a machine that lacks what a node needs
(``make node-tools``, a cgroup hierarchy, bridges, veths) fails the first test with one line
naming it. A pod that never becomes Ready fails its test with the pod's events and logs and the
node's component logs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes import config as k8s_config
from kubernetes.client import ApiException

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "crds" / "konnects.konnectz.io.yaml"
CACHE = Path(os.environ.get("KONNECTZ_CACHE", Path.home() / ".cache" / "konnectz"))
TAG = os.environ.get("IMAGE_TAG", "dev")
BUILDAH = [
    "buildah",
    "--root",
    str(CACHE / "containers" / "storage"),
    "--runroot",
    str(CACHE / "containers" / "run"),
    "--storage-driver",
    "vfs",
]  # fmt: skip (the same storage as `make images`)

# Its own worker under `make test` (pytest -n --dist loadgroup): the node does not wait for the
# kwok tests' group, nor they for it.
pytestmark = [pytest.mark.k8s, pytest.mark.xdist_group("real-node")]


def _load_node_module():
    name = "konnectz_test_node"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "cluster" / "node.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


nodes = _load_node_module()


class RealNode:
    def __init__(self, node: Any) -> None:
        self.node = node
        self.api = k8s_config.new_client_from_config(config_file=str(node.kubeconfig))
        self.core = client.CoreV1Api(self.api)

    def pod_report(self, namespace: str, name: str) -> str:
        """The pod's status, events and logs, and the node's logs: what a failing test prints."""
        parts = []
        try:
            pod = self.core.read_namespaced_pod(name, namespace)
            parts.append(
                f"phase {pod.status.phase}; conditions {[(c.type, c.status) for c in pod.status.conditions or []]}"
            )
            for cs in pod.status.container_statuses or []:
                parts.append(f"container {cs.name}: ready={cs.ready} restarts={cs.restart_count} state={cs.state}")
                try:
                    logs = self.core.read_namespaced_pod_log(name, namespace, container=cs.name, tail_lines=40)
                    parts.append(f"----- logs of {cs.name}\n{logs}")
                except ApiException as exc:
                    parts.append(f"(no logs of {cs.name}: {exc.status} {exc.reason})")
        except ApiException as exc:
            parts.append(f"(pod {namespace}/{name}: {exc.status} {exc.reason})")
        events = self.core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}")
        parts.append("----- events")
        parts += [f"{e.type} {e.reason}: {e.message}" for e in events.items]
        parts.append(self.node.log_tails(20))
        return "\n".join(parts)

    def wait_pod(self, namespace: str, name: str, what: Callable[[Any], bool], label: str, timeout: float = 90) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                pod = self.core.read_namespaced_pod(name, namespace)
                if what(pod):
                    return pod
            except ApiException as exc:
                if exc.status != 404:
                    raise
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"pod {namespace}/{name} not {label} within {timeout} s:\n" + self.pod_report(namespace, name)
                )
            time.sleep(0.3)

    def wait_ready(self, namespace: str, name: str, timeout: float = 90) -> Any:
        def ready(pod: Any) -> bool:
            if pod.status.phase in ("Failed", "Succeeded"):
                raise AssertionError(
                    f"pod {namespace}/{name} ended ({pod.status.phase}):\n" + self.pod_report(namespace, name)
                )
            return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])

        return self.wait_pod(namespace, name, ready, "Ready", timeout)

    def wait_done(self, namespace: str, name: str, timeout: float = 90) -> Any:
        return self.wait_pod(namespace, name, lambda p: p.status.phase in ("Succeeded", "Failed"), "finished", timeout)


@pytest.fixture(scope="module")
def real_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealNode]:
    if os.geteuid() != 0:
        pytest.skip("a real node needs root (network namespaces, mounts, cgroups, iptables)")
    state = REPO / ".konnectz" / f"pytest-realnode-{os.getpid()}"
    t0 = time.monotonic()
    try:
        node = nodes.up(state)
    except nodes.ClusterError as exc:
        pytest.fail(f"the real node did not start: {exc}", pytrace=False)
    print(f"\n[real node] {node.name} Ready in {time.monotonic() - t0:.1f} s ({node.timings})", file=sys.stderr)
    real = RealNode(node)
    try:
        yield real
    finally:
        real.api.close()
        if os.environ.get("KONNECTZ_KEEP_TEST_CLUSTER") != "1":
            nodes.down(state, quiet=True)
            import shutil

            shutil.rmtree(state, ignore_errors=True)


@pytest.fixture
def ns(real_node: RealNode, request: pytest.FixtureRequest) -> Iterator[str]:
    base = "".join(c if c.isalnum() else "-" for c in request.node.name.lower())[:40].strip("-")
    name = f"t-{base}-{uuid.uuid4().hex[:6]}"
    real_node.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    deadline = time.monotonic() + 30
    while True:
        try:
            real_node.core.read_namespaced_service_account("default", name)
            break
        except ApiException as exc:
            if exc.status != 404 or time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    yield name
    try:
        real_node.core.delete_namespace(name, grace_period_seconds=0)
    except ApiException:
        pass


def _pod(name: str, image: str, command: list[str], *, labels: dict[str, str] | None = None, tolerate: bool = True,
         restart: str = "Always", **container: Any) -> dict[str, Any]:  # fmt: skip
    spec: dict[str, Any] = {
        "restartPolicy": restart,
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "main", "image": image, "imagePullPolicy": "Never", "command": command, **container}],
    }
    if tolerate:
        spec["tolerations"] = [nodes.TOLERATION]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


WEB = ["httpd", "-f", "-p", "8080", "-h", "/www"]  # busybox's httpd: /www/index.html says "konnectz real node"
PAGE = "konnectz real node"


def test_the_node_is_ready_tainted_and_runs_what_was_built_here(real_node: RealNode) -> None:
    node = real_node.core.read_node(real_node.node.name)
    ready = {c.type: c.status for c in node.status.conditions}
    assert ready["Ready"] == "True", ready
    assert [(t.key, t.effect) for t in node.spec.taints or []] == [(nodes.TAINT_KEY, "NoSchedule")]
    info = node.status.node_info
    bins = real_node.node.bin_dir
    # the kubelet of the control plane's own version, built from the same Go modules
    assert (
        info.kubelet_version
        == subprocess.run(
            [str(bins / "kube-apiserver"), "--version"], capture_output=True, text=True, check=True
        ).stdout.split()[-1]
    )
    assert info.container_runtime_version.startswith("containerd://")
    assert {a.type: a.address for a in node.status.addresses}["InternalIP"] == real_node.node.node_ip
    assert set(real_node.node.images()) >= {nodes.PAUSE_IMAGE, nodes.BUSYBOX_IMAGE}


def test_a_pod_runs_passes_its_readiness_probe_and_its_service_answers(real_node: RealNode, ns: str) -> None:
    core = real_node.core
    probe = {"httpGet": {"path": "/", "port": 8080}, "periodSeconds": 1}
    core.create_namespaced_pod(
        ns, _pod("web", nodes.BUSYBOX_IMAGE, WEB, labels={"app": "web"}, readinessProbe=probe,
                 ports=[{"containerPort": 8080}]),
    )  # fmt: skip
    svc = core.create_namespaced_service(
        ns,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
        },
    )
    pod = real_node.wait_ready(ns, "web")
    assert pod.spec.node_name == real_node.node.name and pod.status.pod_ip.startswith("10.244.")
    ip = svc.spec.cluster_ip

    # From the node (its network namespace, where kube-proxy's rules are): the Service's IP.
    def through_service() -> str:
        got = real_node.node.exec("busybox", "wget", "-q", "-O-", f"http://{ip}/", check=False, timeout=20)
        return got.stdout

    deadline = time.monotonic() + 30  # kube-proxy syncs its rules within a second or two
    while (answer := through_service()) != PAGE + "\n" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert answer == PAGE + "\n", real_node.node.log_tails(20)

    # From another pod: by the Service's IP, by the environment the kubelet gives it, and by its
    # names in the cluster's DNS (CoreDNS on the node).
    urls = [f"http://{ip}/", "http://$WEB_SERVICE_HOST:$WEB_SERVICE_PORT/", "http://web/", f"http://web.{ns}.svc/",
            f"http://web.{ns}.svc.cluster.local/"]  # fmt: skip
    command = ["sh", "-c", " && ".join(f"wget -q -O- {url}" for url in urls)]
    core.create_namespaced_pod(ns, _pod("client", nodes.BUSYBOX_IMAGE, command, restart="Never"))
    done = real_node.wait_done(ns, "client")
    assert done.status.phase == "Succeeded", real_node.pod_report(ns, "client")
    assert core.read_namespaced_pod_log("client", ns) == (PAGE + "\n") * len(urls)


def test_names_outside_the_cluster_are_not_resolved(real_node: RealNode, ns: str) -> None:
    """CoreDNS forwards nothing: a pod's lookups never leave the machine."""
    command = ["sh", "-c", "nslookup kubernetes.default.svc.cluster.local && ! nslookup example.com"]
    real_node.core.create_namespaced_pod(ns, _pod("lookup", nodes.BUSYBOX_IMAGE, command, restart="Never"))
    done = real_node.wait_done(ns, "lookup")
    log = real_node.core.read_namespaced_pod_log("lookup", ns)
    assert done.status.phase == "Succeeded", real_node.pod_report(ns, "lookup")
    assert "Address: 10.0.0.1" in log and "NXDOMAIN" in log, log


def test_a_pod_that_does_not_tolerate_the_taint_never_lands_on_the_node(real_node: RealNode, ns: str) -> None:
    real_node.core.create_namespaced_pod(ns, _pod("stray", nodes.BUSYBOX_IMAGE, WEB, tolerate=False))

    def unschedulable(pod: Any) -> bool:
        return any(c.type == "PodScheduled" and c.reason == "Unschedulable" for c in pod.status.conditions or [])

    pod = real_node.wait_pod(ns, "stray", unschedulable, "reported Unschedulable", timeout=60)
    assert pod.spec.node_name is None
    message = next(c.message for c in pod.status.conditions if c.type == "PodScheduled")
    assert "untolerated taint" in message, message


def test_a_pod_that_never_becomes_ready_is_reported_with_its_events_and_logs(real_node: RealNode, ns: str) -> None:
    probe = {"httpGet": {"path": "/", "port": 9999}, "periodSeconds": 1}
    command = ["sh", "-c", "echo starting the wrong port; exec httpd -f -p 8080 -h /www"]
    real_node.core.create_namespaced_pod(ns, _pod("never", nodes.BUSYBOX_IMAGE, command, readinessProbe=probe))
    with pytest.raises(AssertionError) as failed:
        real_node.wait_ready(ns, "never", timeout=5)
    report = str(failed.value)
    assert "not Ready within 5 s" in report
    assert "starting the wrong port" in report  # the container's log
    assert "Unhealthy" in report and "9999" in report  # the failing probe's event
    assert "kubelet.log" in report  # the node's own logs


def _operator_image_archive() -> Path:
    """localhost/konnectz-operator:TAG from `make images` (built here if missing), as an OCI archive."""
    image = f"localhost/konnectz-operator:{TAG}"
    inspect = subprocess.run([*BUILDAH, "inspect", "--type", "image", image], capture_output=True, text=True)
    if inspect.returncode != 0:
        env = {**os.environ, "BUILDAH": " ".join(BUILDAH), "KONNECTZ_IMAGES_CACHE": str(CACHE / "images"),
               "IMAGE_BASES": "local", "IMAGE_TAG": TAG, "IMAGES": "operator"}  # fmt: skip
        built = subprocess.run([str(REPO / "docker" / "build-images")], env=env, capture_output=True, text=True,
                               timeout=3600)  # fmt: skip
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return nodes.buildah_archive(image, BUILDAH, CACHE)


def test_the_operator_image_runs_on_the_node_and_reaches_the_api_server_in_cluster(
    real_node: RealNode, ns: str
) -> None:
    """The image `make images` builds, under the chart's security settings (non-root, read-only root
    filesystem, no capabilities, RuntimeDefault seccomp), talks to the API server through the
    `kubernetes` Service with its ServiceAccount's token and answers its probe."""
    image = f"localhost/konnectz-operator:{TAG}"
    t0 = time.monotonic()
    real_node.node.load_image(_operator_image_archive(), name=image)
    loaded = time.monotonic() - t0
    assert image in real_node.node.images()
    subprocess.run([str(real_node.node.bin_dir / "kubectl"), f"--kubeconfig={real_node.node.kubeconfig}", "apply",
                    "--server-side", "-f", str(CRD)], check=True, capture_output=True)  # fmt: skip
    rbac = client.RbacAuthorizationV1Api(real_node.api)
    binding = f"{ns}-operator"
    rbac.create_cluster_role_binding(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": binding},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}],
        }
    )
    try:
        pod = _pod(
            "operator", image, ["python", "-m", "konnectz_operator"],
            env=[{"name": "KONNECTZ_NAMESPACE", "value": ns}, {"name": "KONNECTZ_LIVENESS_PORT", "value": "8080"},
                 {"name": "KONNECTZ_NATS_URL", "value": "nats://127.0.0.1:4222"}],
            readinessProbe={"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 2},
            securityContext={"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                             "capabilities": {"drop": ["ALL"]}},
            volumeMounts=[{"name": "tmp", "mountPath": "/tmp"}],
        )  # fmt: skip
        pod["spec"]["securityContext"] = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
        pod["spec"]["volumes"] = [{"name": "tmp", "emptyDir": {}}]
        real_node.core.create_namespaced_pod(ns, pod)
        real_node.wait_ready(ns, "operator", timeout=120)
        print(f"\n[real node] operator image imported in {loaded:.1f} s", file=sys.stderr)
        # Its own words that it reached the API server (kopf's peering and watches need it).
        logs = real_node.core.read_namespaced_pod_log("operator", ns)
        assert "Traceback" not in logs, logs
    finally:
        rbac.delete_cluster_role_binding(binding)


def test_a_claim_of_the_default_storage_class_gets_a_local_volume_with_the_pods_fs_group(
    real_node: RealNode, ns: str
) -> None:
    """What the chart's NATS and PostgreSQL ask for (a claim of the default class, a non-root user with
    an fsGroup) is met by the node's local volumes."""
    core = real_node.core
    core.create_namespaced_persistent_volume_claim(
        ns,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}},
        },
    )
    command = ["sh", "-c", "id -u; echo kept > /data/file && ls -ln /data/file"]
    pod = _pod("writer", nodes.BUSYBOX_IMAGE, command, restart="Never",
               volumeMounts=[{"name": "data", "mountPath": "/data"}])  # fmt: skip
    pod["spec"]["securityContext"] = {"runAsUser": 999, "runAsGroup": 999, "fsGroup": 999, "runAsNonRoot": True}
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    core.create_namespaced_pod(ns, pod)
    done = real_node.wait_done(ns, "writer")
    assert done.status.phase == "Succeeded", real_node.pod_report(ns, "writer")
    claim = core.read_namespaced_persistent_volume_claim("data", ns)
    assert claim.status.phase == "Bound" and claim.spec.storage_class_name == nodes.STORAGE_CLASS
    lines = core.read_namespaced_pod_log("writer", ns).split("\n")
    assert lines[0] == "999" and " 999 " in lines[1], lines
    path = core.read_persistent_volume(claim.spec.volume_name).spec.local.path
    assert (Path(path) / "file").read_text() == "kept\n"


def test_stopping_the_node_leaves_nothing_behind(real_node: RealNode) -> None:
    """Runs last: down() while pods run (their containers, mounts, cgroups, the namespace with its
    iptables chains, bridge and veths) leaves nothing on the machine."""
    node = real_node.node
    assert real_node.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node.name}").items is not None
    t0 = time.monotonic()
    nodes.down(node.state_dir, quiet=True)
    took = time.monotonic() - t0
    assert nodes.leftovers(node) == []
    assert json.loads(json.dumps(node.pids))  # recorded
    print(f"\n[real node] stopped in {took:.1f} s", file=sys.stderr)
