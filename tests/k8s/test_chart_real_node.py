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
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from kubernetes import client
from kubernetes import config as k8s_config
from kubernetes.client import ApiException

from konnectz_contracts.resource import GROUP, PLURAL, VERSION
from konnectz_devstack import testing
from konnectz_devstack._ports import free_port

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "konnectz"
CACHE = Path(os.environ.get("KONNECTZ_CACHE", Path.home() / ".cache" / "konnectz"))
TAG = os.environ.get("IMAGE_TAG", "dev")
COMPONENTS = ("api", "runner", "operator", "postgresql", "nats")
BUILDAH = ["buildah", "--root", str(CACHE / "containers" / "storage"), "--runroot", str(CACHE / "containers" / "run"),
           "--storage-driver", "vfs"]  # fmt: skip
RELEASE = "kz"
EXPECTED = {"api", "operator", "runner-pool", "nats", "postgresql"}  # the components with pods

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
        """The release's pods, once every component has its pods and every pod is Ready."""
        deadline = time.monotonic() + timeout
        while True:
            pods = self.core.list_namespaced_pod(
                namespace, label_selector=f"app.kubernetes.io/instance={RELEASE}"
            ).items
            present = {p.metadata.labels.get("app.kubernetes.io/component") for p in pods}
            waiting = [
                p.metadata.name
                for p in pods
                if p.metadata.deletion_timestamp is None
                and p.status.phase != "Succeeded"
                and not any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
            ]
            if present >= EXPECTED and not waiting:
                return pods
            if time.monotonic() > deadline:
                raise AssertionError(f"not Ready within {timeout} s: {waiting}\n" + self.report(namespace))
            time.sleep(1)


def _image(component: str) -> str:
    return f"localhost/konnectz-{component}:{TAG}"


def _sets() -> list[str]:
    """The overrides: the images' names (the chart's pull policy, IfNotPresent, finds them loaded); the test's
    mail sink as the api's SMTP server; the Service range as a network the runners may call (the flow's API
    call goes to a pod of the cluster)."""
    args = ["--set", "env=test"]
    for component in COMPONENTS:
        args += ["--set", f"{component}.image.repository=localhost/konnectz-{component},{component}.image.tag={TAG}"]
    args += ["--set", "api.extraEnv[0].name=KONNECTZ_SMTP_HOST", "--set", f"api.extraEnv[0].value=mail.{RELEASE}.svc"]
    args += ["--set-string", f"runner.env.KONNECTZ_ALLOW_PRIVATE_NETWORKS={nodes.SERVICE_CIDR}"]
    return args


# Beside the release, from the api image (Python 3.11): an SMTP sink that prints what it receives (the
# verification mail), and the API the published flow calls (it prints each call).
SINK = "import smtpd, asyncore; smtpd.DebuggingServer(('0.0.0.0', 1025), None); asyncore.loop()"
TARGET = """import http.server as h
class H(h.BaseHTTPRequestHandler):
    def do_POST(s):
        body = s.rfile.read(int(s.headers.get('content-length', 0)))
        print('CALL', s.path, body.decode(), flush=True)
        s.send_response(200); s.send_header('content-type', 'application/json'); s.end_headers()
        s.wfile.write(b'{"ok": true}')
h.HTTPServer(('0.0.0.0', 8080), H).serve_forever()
"""


def _helpers(installed: Installed) -> None:
    image = _image("api")
    for name, command, port in (("mail", ["python", "-W", "ignore", "-c", SINK], 1025),
                                ("target", ["python", "-c", TARGET], 8080)):  # fmt: skip
        installed.core.create_namespaced_pod(
            RELEASE,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "labels": {"app": name}},
                "spec": {
                    "containers": [{"name": name, "image": image, "imagePullPolicy": "Never", "command": command}]
                },
            },
        )
        installed.core.create_namespaced_service(
            RELEASE,
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": name},
                "spec": {
                    "selector": {"app": name},
                    "ports": [{"port": 80 if port == 8080 else port, "targetPort": port}],
                },
            },
        )


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
    installed.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": RELEASE}})
    _helpers(installed)
    t0 = time.monotonic()
    installed.run("helm", "install", RELEASE, str(CHART), "-n", RELEASE, *_sets())
    pods = installed.wait_all_ready(RELEASE)
    print(f"\n[chart node] every pod Ready {time.monotonic() - t0:.1f} s after helm install", file=sys.stderr)
    components = {p.metadata.labels.get("app.kubernetes.io/component") for p in pods}
    assert components >= EXPECTED, components
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


def _wait(what: str, fn: Any, timeout: float = 120, interval: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s (last: {value!r})")
        time.sleep(interval)


def test_sign_up_publish_and_a_webhook_through_the_runners_service_runs_the_flow(installed: Installed) -> None:
    """Through the api Service (kubectl port-forward): sign up, verify by the mailed link, sign in, publish a
    Webhook → API Call flow; the operator runs it in its own runner Deployment; a webhook POSTed to that
    runner's Service calls the API once, and `kubectl get konnects` shows the run."""
    port = free_port()
    forward = subprocess.Popen(
        [str(installed.node.bin_dir / "kubectl"), "-n", RELEASE, "port-forward", f"svc/{RELEASE}-konnectz-api",
         f"{port}:80"], env=installed.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        api = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        _wait("the api through kubectl port-forward", lambda: _get_ok(api, "/healthz"), 60)
        email, password = "ops@example.com", "Sup3r-secret-pw!"
        body = {"email": email, "first_name": "Ops", "last_name": "User", "password": password,
                "password_confirmation": password}  # fmt: skip
        signed = api.post("/api/v1/signup", json=body)
        assert signed.status_code == 201, signed.text

        def mailed_token() -> str | None:
            found = re.findall(
                r"/verify-email/([A-Za-z0-9_-]+)", installed.core.read_namespaced_pod_log("mail", RELEASE)
            )
            return found[-1] if found else None

        token = _wait("the verification mail", mailed_token, 60)
        confirmed = api.post("/api/v1/users/email_confirmation", json={"confirmation_token": token})
        assert confirmed.json()["key"] == "VERIFY_EMAIL_SUCCESS", confirmed.text
        headers = testing.sign_in(api, email, password)
        reply = testing.publish_canvas(api, headers, testing.webhook_canvas(f"http://target.{RELEASE}.svc/orders"))
        hook = reply["webhook_url"].split("/hooks/", 1)[1]
    finally:
        forward.terminate()
        forward.wait(10)

    konnect = f"konnect-{reply['konnect_id']}"
    runner = f"{RELEASE}-{konnect}"
    custom = client.CustomObjectsApi(installed.api)

    def status() -> dict[str, Any]:
        return custom.get_namespaced_custom_object(GROUP, VERSION, RELEASE, PLURAL, konnect).get("status") or {}

    _wait(f"Konnect {konnect} Ready", lambda: status().get("phase") == "Ready")
    _wait(f"the runner Deployment {runner} available",
          lambda: (installed.apps.read_namespaced_deployment(runner, RELEASE).status.available_replicas or 0) >= 1,
          180)  # fmt: skip
    svc = installed.core.read_namespaced_service(runner, RELEASE)
    url = f"http://{svc.spec.cluster_ip}:{svc.spec.ports[0].port}/hooks/{hook}"

    def post() -> str | None:
        got = installed.node.exec("busybox", "wget", "-q", "-O-", "--header", "Content-Type: application/json",
                                  "--post-data", '{"name": "Ada"}', url, check=False, timeout=30)  # fmt: skip
        return got.stdout if got.returncode == 0 else None

    accepted = _wait("the webhook accepted through the runner's Service", post, 60)
    assert '"accepted"' in accepted, accepted
    calls = _wait("the flow's API call",
                  lambda: [line for line in installed.core.read_namespaced_pod_log("target", RELEASE).splitlines()
                           if line.startswith("CALL /orders")], 60)  # fmt: skip
    _wait("runsToday 1", lambda: status().get("runsToday") == 1, 90)
    time.sleep(2)
    calls = [
        ln for ln in installed.core.read_namespaced_pod_log("target", RELEASE).splitlines() if ln.startswith("CALL")
    ]
    assert len(calls) == 1, calls  # one webhook, one call
    assert status().get("lastOutcome", "SUCCESS") in ("SUCCESS", "Success", "success"), status()


def _get_ok(api: httpx.Client, path: str) -> bool:
    try:
        return api.get(path).status_code == 200
    except httpx.HTTPError:
        return False


def test_helm_upgrade_with_a_changed_value_rolls_the_pods(installed: Installed) -> None:
    api = "app.kubernetes.io/component=api"
    before = {p.metadata.name for p in installed.core.list_namespaced_pod(RELEASE, label_selector=api).items}
    changed = ["--set", "api.extraEnv[1].name=KONNECTZ_TEST_ROLL", "--set-string", "api.extraEnv[1].value=1"]
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
    for helper in ("mail", "target"):  # the test's own, not the chart's
        installed.core.delete_namespaced_pod(helper, RELEASE, grace_period_seconds=0)
        installed.core.delete_namespaced_service(helper, RELEASE)
    # What the api published lives in Konnects (the operator's children: a runner Deployment and Service each);
    # they are the platform's data, not the release's: unpublished first, as a user would before uninstalling.
    custom = client.CustomObjectsApi(installed.api)
    for konnect in custom.list_namespaced_custom_object(GROUP, VERSION, RELEASE, PLURAL)["items"]:
        custom.delete_namespaced_custom_object(GROUP, VERSION, RELEASE, PLURAL, konnect["metadata"]["name"])
    _wait("the Konnects' children gone", lambda: not installed.apps.list_namespaced_deployment(
        RELEASE, label_selector="app.kubernetes.io/managed-by=konnectz-operator").items, 120)  # fmt: skip
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
