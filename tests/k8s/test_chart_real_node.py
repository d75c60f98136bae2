"""The chart on a real node (issue 35, item 3, first part): `helm install` with the chart's defaults,
only the images' names overridden (the images of `make images`, loaded into the node's containerd;
`env=test` for generated secrets) → every pod Ready, the claims bound, the api answering through its
Service; `helm upgrade` with a changed value rolls the api; `helm uninstall` leaves only the claims
and what the chart keeps on purpose.

Its own real node (``tests/cluster/node.py``) without the real-node taint (the chart's pods tolerate
nothing; the node's control plane is its own, so no kwok test's pod can land there). Needs root and
every image the chart uses in buildah's storage (`make images`): a missing one skips the module with
its name. Not yet here (item 3's rest): sign up, a published flow with its runner Deployment, a
schedule's CronJob, a webhook through the runner's Service.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes import config as k8s_config
from kubernetes.client import ApiException

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "konnectz"
CACHE = Path(os.environ.get("KONNECTZ_CACHE", Path.home() / ".cache" / "konnectz"))
TAG = os.environ.get("IMAGE_TAG", "dev")
COMPONENTS = ("api", "runner", "operator", "postgresql", "nats")
BUILDAH = ["buildah", "--root", str(CACHE / "containers" / "storage"), "--runroot", str(CACHE / "containers" / "run"),
           "--storage-driver", "vfs"]  # fmt: skip
RELEASE = "kz"

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


class Installed:
    def __init__(self, node: Any, env: dict[str, str]) -> None:
        self.node = node
        self.env = env
        self.api = k8s_config.new_client_from_config(config_file=str(node.kubeconfig))
        self.core = client.CoreV1Api(self.api)
        self.apps = client.AppsV1Api(self.api)

    def run(self, tool: str, *args: str, timeout: float = 300) -> str:
        proc = subprocess.run([str(self.node.bin_dir / tool), *args], capture_output=True, text=True, env=self.env,
                              timeout=timeout)  # fmt: skip
        assert proc.returncode == 0, f"{tool} {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    def report(self, namespace: str) -> str:
        """Every pod's state, events and last log lines, and the node's logs."""
        parts = []
        for pod in self.core.list_namespaced_pod(namespace).items:
            name = pod.metadata.name
            parts.append(f"== {name}: {pod.status.phase} {[(c.type, c.status) for c in pod.status.conditions or []]}")
            for cs in (pod.status.init_container_statuses or []) + (pod.status.container_statuses or []):
                parts.append(f"   {cs.name}: ready={cs.ready} restarts={cs.restart_count} state={cs.state}")
                try:
                    logs = self.core.read_namespaced_pod_log(name, namespace, container=cs.name, tail_lines=15)
                    parts.append("   " + logs.replace("\n", "\n   "))
                except ApiException:
                    pass
        for event in self.core.list_namespaced_event(namespace).items[-30:]:
            parts.append(f"{event.involved_object.name}: {event.type} {event.reason}: {event.message}")
        parts.append(self.node.log_tails(15))
        return "\n".join(parts)

    def wait_all_ready(self, namespace: str, timeout: float = 240) -> list[Any]:
        deadline = time.monotonic() + timeout
        while True:
            pods = self.core.list_namespaced_pod(namespace).items
            waiting = [
                p.metadata.name
                for p in pods
                if p.metadata.deletion_timestamp is None
                and p.status.phase != "Succeeded"
                and not any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
            ]
            if pods and not waiting:
                return pods
            if time.monotonic() > deadline:
                raise AssertionError(f"not Ready within {timeout} s: {waiting}\n" + self.report(namespace))
            time.sleep(1)


def _image(component: str) -> str:
    return f"localhost/konnectz-{component}:{TAG}"


def _sets() -> list[str]:
    """The only overrides: the images' names (the chart's pull policy, IfNotPresent, finds them loaded)."""
    args = ["--set", "env=test"]
    for component in COMPONENTS:
        args += ["--set", f"{component}.image.repository=localhost/konnectz-{component},{component}.image.tag={TAG}"]
    return args


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    if os.geteuid() != 0:
        pytest.skip("a real node needs root (network namespaces, mounts, cgroups, iptables)")
    missing = [
        _image(c)
        for c in COMPONENTS
        if subprocess.run([*BUILDAH, "inspect", "--type", "image", _image(c)], capture_output=True).returncode != 0
    ]
    if missing:
        pytest.skip(f"images the chart runs are not built: {', '.join(missing)} (make images)")
    state = REPO / ".konnectz" / f"pytest-chart-node-{os.getpid()}"
    try:
        node = nodes.up(state, taint=False)
    except nodes.ClusterError as exc:
        pytest.fail(f"the real node did not start: {exc}", pytrace=False)
    helm_home = tmp_path_factory.mktemp("helm-home")
    env = {**os.environ, "KUBECONFIG": str(node.kubeconfig), "HELM_CACHE_HOME": str(helm_home / "cache"),
           "HELM_CONFIG_HOME": str(helm_home / "config"), "HELM_DATA_HOME": str(helm_home / "data")}  # fmt: skip
    got = Installed(node, env)
    try:
        t0 = time.monotonic()
        for c in COMPONENTS:
            node.load_image(nodes.buildah_archive(_image(c), BUILDAH, CACHE), name=_image(c))
        print(f"\n[chart node] {len(COMPONENTS)} images loaded in {time.monotonic() - t0:.1f} s", file=sys.stderr)
        yield got
    finally:
        got.api.close()
        if os.environ.get("KONNECTZ_KEEP_TEST_CLUSTER") != "1":
            nodes.down(state, quiet=True)
            shutil.rmtree(state, ignore_errors=True)


def test_helm_install_with_the_charts_defaults_makes_every_pod_ready(installed: Installed) -> None:
    t0 = time.monotonic()
    installed.run("helm", "install", RELEASE, str(CHART), "-n", RELEASE, "--create-namespace", *_sets())
    pods = installed.wait_all_ready(RELEASE)
    print(f"\n[chart node] every pod Ready {time.monotonic() - t0:.1f} s after helm install", file=sys.stderr)
    components = {p.metadata.labels.get("app.kubernetes.io/component") for p in pods}
    assert components >= {"api", "operator", "runner-pool", "nats", "postgresql"}, components
    assert {p.spec.node_name for p in pods} == {installed.node.name}
    claims = installed.core.list_namespaced_persistent_volume_claim(RELEASE).items
    assert claims and {c.status.phase for c in claims} == {"Bound"}, [(c.metadata.name, c.status.phase) for c in claims]
    # The api through its Service (kube-proxy on the node), as the chart's NOTES and Ingress reach it.
    svc = installed.core.read_namespaced_service(f"{RELEASE}-konnectz-api", RELEASE)
    url = f"http://{svc.spec.cluster_ip}:{svc.spec.ports[0].port}/healthz"
    # (kube-proxy rejects a Service's traffic, "No route to host", until it has the Ready endpoints)
    deadline = time.monotonic() + 30
    while True:
        answer = installed.node.exec("busybox", "wget", "-q", "-O-", url, check=False, timeout=30)
        if (answer.returncode == 0 and '"ok"' in answer.stdout) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert answer.returncode == 0 and '"ok"' in answer.stdout, answer.stdout + answer.stderr


def test_helm_upgrade_with_a_changed_value_rolls_the_pods(installed: Installed) -> None:
    api = "app.kubernetes.io/component=api"
    before = {p.metadata.name for p in installed.core.list_namespaced_pod(RELEASE, label_selector=api).items}
    changed = ["--set", "api.extraEnv[0].name=KONNECTZ_TEST_ROLL", "--set-string", "api.extraEnv[0].value=1"]
    installed.run("helm", "upgrade", RELEASE, str(CHART), "-n", RELEASE, *_sets(), *changed)
    deadline = time.monotonic() + 240
    while True:
        api_pods = installed.core.list_namespaced_pod(RELEASE, label_selector=api).items
        new = [p for p in api_pods if p.metadata.name not in before and p.metadata.deletion_timestamp is None]
        ready = [p for p in new if any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])]
        if ready and not [p for p in api_pods if p.metadata.name in before]:
            break
        if time.monotonic() > deadline:
            raise AssertionError("the api did not roll within 240 s\n" + installed.report(RELEASE))
        time.sleep(1)
    env = {e.name: e.value for e in ready[0].spec.containers[0].env or []}
    assert env.get("KONNECTZ_TEST_ROLL") == "1"
    installed.wait_all_ready(RELEASE)


def test_helm_uninstall_leaves_only_the_claims_and_what_the_chart_keeps(installed: Installed) -> None:
    installed.run("helm", "uninstall", RELEASE, "-n", RELEASE, "--wait", "--timeout", "3m")
    deadline = time.monotonic() + 120
    while installed.core.list_namespaced_pod(RELEASE).items and time.monotonic() < deadline:
        time.sleep(1)
    assert installed.core.list_namespaced_pod(RELEASE).items == []
    assert installed.apps.list_namespaced_deployment(RELEASE).items == []
    assert installed.apps.list_namespaced_stateful_set(RELEASE).items == []
    assert installed.core.list_namespaced_service(RELEASE).items == []
    # What the chart keeps on purpose (helm.sh/resource-policy: keep: the generated secrets, the database's
    # password) is all that is left of its own objects.
    rendered = installed.run("helm", "template", RELEASE, str(CHART), "-n", RELEASE, *_sets())
    kept = {
        (doc["kind"], doc["metadata"]["name"])
        for doc in yaml.safe_load_all(rendered)
        if doc and (doc["metadata"].get("annotations") or {}).get("helm.sh/resource-policy") == "keep"
    }
    left = {("Secret", s.metadata.name) for s in installed.core.list_namespaced_secret(RELEASE).items}
    left |= {("ConfigMap", c.metadata.name) for c in installed.core.list_namespaced_config_map(RELEASE).items}
    assert left - {("ConfigMap", "kube-root-ca.crt")} == kept
    # The StatefulSets' claims stay (Kubernetes keeps a StatefulSet's volumeClaimTemplates' claims): the data of
    # NATS and PostgreSQL outlives the release.
    claims = sorted(c.metadata.name for c in installed.core.list_namespaced_persistent_volume_claim(RELEASE).items)
    assert claims == [f"data-{RELEASE}-konnectz-nats-0", f"data-{RELEASE}-konnectz-postgresql-0"], claims
