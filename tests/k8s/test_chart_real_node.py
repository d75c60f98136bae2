"""The chart on a real node (issue 35, items 3-5): `helm install` with the chart's defaults, only the
images' names overridden (the images of `make images`, loaded into the node's containerd; `env=test` for
generated secrets) → every pod Ready, the claims bound, the api answering through its Service; sign up and
publish a webhook flow and an every-minute schedule (its CronJob's Job really runs), `kubectl get konnects`
shows both with their runs; `helm upgrade` with a changed value rolls the api; `helm uninstall` leaves only
the claims and what the chart keeps on purpose. Then a second release with three NATS pods
(nats.replicas=3, every stream on three servers) takes a bounded load of webhooks while its runner, api,
one NATS and the PostgreSQL pod are deleted one after another: every accepted webhook ends as exactly one
task log and one API call; its `helm uninstall` leaves the Konnects and their runners.

Its own real node (``tests/cluster/node.py``) without the real-node taint (the chart's pods tolerate
nothing; the node's control plane is its own, so no kwok test's pod can land there). Needs root and
every image the chart uses in buildah's storage (`make images`): a missing one skips the module with
its name. The tests run in order and build on each other (one node, one module fixture).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
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
FAULTS = "kzf"  # the fault test's release and namespace (three NATS pods)
# What the sign-up test published (per release: the signed-in headers, the konnects' ids), for the tests after it.
PUBLISHED: dict[str, dict[str, Any]] = {}

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

    def wait_all_ready(self, namespace: str, timeout: float = 240, nats: int = 1) -> list[Any]:
        """The release's pods (the release is named as its namespace), once every component has its pods
        (``nats`` of NATS) and every pod is Ready."""
        deadline = time.monotonic() + timeout
        while True:
            pods = self.core.list_namespaced_pod(
                namespace, label_selector=f"app.kubernetes.io/instance={namespace}"
            ).items
            present = {p.metadata.labels.get("app.kubernetes.io/component") for p in pods}
            if sum(p.metadata.labels.get("app.kubernetes.io/component") == "nats" for p in pods) < nats:
                present.discard("nats")
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


def _sets(release: str = RELEASE) -> list[str]:
    """The overrides: the images' names (the chart's pull policy, IfNotPresent, finds them loaded); the test's
    mail sink as the api's SMTP server; the Service range as a network the runners may call (the flow's API
    call goes to a pod of the cluster)."""
    args = ["--set", "env=test"]
    for component in COMPONENTS:
        args += ["--set", f"{component}.image.repository=localhost/konnectz-{component},{component}.image.tag={TAG}"]
    args += ["--set", "api.extraEnv[0].name=KONNECTZ_SMTP_HOST", "--set", f"api.extraEnv[0].value=mail.{release}.svc"]
    args += ["--set-string", f"runner.env.KONNECTZ_ALLOW_PRIVATE_NETWORKS={nodes.SERVICE_CIDR}"]
    return args


# Beside the release, from the api image (Python 3.11): an SMTP sink that prints what it receives (the
# verification mail), and the API the published flows call (it prints each call: path, Idempotency-Key, body).
SINK = "import smtpd, asyncore; smtpd.DebuggingServer(('0.0.0.0', 1025), None); asyncore.loop()"
TARGET = """import http.server as h, sys, threading
lock = threading.Lock()
class H(h.BaseHTTPRequestHandler):
    def do_POST(s):
        body = s.rfile.read(int(s.headers.get('content-length', 0)))
        line = ' '.join(('CALL', s.path, s.headers.get('Idempotency-Key') or '-', body.decode())) + '\\n'
        with lock:
            sys.stdout.write(line)
            sys.stdout.flush()
        s.send_response(200); s.send_header('content-type', 'application/json'); s.end_headers()
        s.wfile.write(b'{"ok": true}')
    def log_message(s, *args):
        pass
class S(h.ThreadingHTTPServer):
    request_queue_size = 512  # a burst of runs calls at once (socketserver's listen backlog is 5)
S(('0.0.0.0', 8080), H).serve_forever()
"""


def _calls(installed: Installed, namespace: str, path: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls the target pod received on ``path``: (Idempotency-Key or "-", the JSON body)."""
    found = []
    for line in installed.core.read_namespaced_pod_log("target", namespace).splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[0] == "CALL" and parts[1] == path:
            try:
                found.append((parts[2], json.loads(parts[3])))
            except ValueError:
                raise AssertionError(f"the target printed a call it could not have received: {line!r}") from None
    return found


def _helpers(installed: Installed, namespace: str = RELEASE) -> None:
    image = _image("api")
    for name, command, port in (("mail", ["python", "-W", "ignore", "-c", SINK], 1025),
                                ("target", ["python", "-c", TARGET], 8080)):  # fmt: skip
        installed.core.create_namespaced_pod(
            namespace,
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
            namespace,
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
        try:
            value = fn()
        except ApiException as exc:  # an object not made yet counts as not yet
            if exc.status != 404:
                raise
            value = None
            missing = f"404 {exc.reason}"
        else:
            missing = ""
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s (last: {value!r}{missing})")
        time.sleep(interval)


@contextlib.contextmanager
def _api_through_port_forward(installed: Installed, namespace: str) -> Iterator[httpx.Client]:
    """The api of the release in ``namespace`` through its Service (``kubectl port-forward``)."""
    port = free_port()
    log = installed.node.state_dir / f"port-forward-{namespace}-{port}.log"
    with open(log, "w") as out:
        forward = subprocess.Popen(
            [str(installed.node.bin_dir / "kubectl"), "-n", namespace, "port-forward",
             f"svc/{namespace}-konnectz-api", f"{port}:80"], env=installed.env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    api = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    try:
        _wait("the api through kubectl port-forward", lambda: _get_ok(api, "/healthz"), 60)
        yield api
    finally:
        api.close()
        forward.terminate()
        forward.wait(10)


def _sign_up(installed: Installed, namespace: str, api: httpx.Client) -> dict[str, str]:
    """Sign up, verify by the link mailed to the release's mail sink, sign in: the signed-in headers."""
    email, password = "ops@example.com", "Sup3r-secret-pw!"
    body = {"email": email, "first_name": "Ops", "last_name": "User", "password": password,
            "password_confirmation": password}  # fmt: skip
    signed = api.post("/api/v1/signup", json=body)
    assert signed.status_code == 201, signed.text

    def mailed_token() -> str | None:
        found = re.findall(r"/verify-email/([A-Za-z0-9_-]+)", installed.core.read_namespaced_pod_log("mail", namespace))
        return found[-1] if found else None

    token = _wait("the verification mail", mailed_token, 60)
    confirmed = api.post("/api/v1/users/email_confirmation", json={"confirmation_token": token})
    assert confirmed.json()["key"] == "VERIFY_EMAIL_SUCCESS", confirmed.text
    return testing.sign_in(api, email, password)


def _child(konnect_id: int) -> str:
    """The name of the operator's children of Konnect ``konnect-<id>`` (Deployment, Service, CronJob)."""
    return f"kz-konnect-{konnect_id}"


def _konnect_status(installed: Installed, namespace: str, konnect_id: int) -> dict[str, Any]:
    custom = client.CustomObjectsApi(installed.api)
    got = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, f"konnect-{konnect_id}")
    return got.get("status") or {}


def _runner_url(installed: Installed, namespace: str, konnect_id: int, hook: str) -> str:
    """Once the Konnect is Ready and its runner Deployment available: the webhook's URL on the runner's Service."""
    runner = _child(konnect_id)
    _wait(
        f"Konnect {konnect_id} Ready", lambda: _konnect_status(installed, namespace, konnect_id).get("phase") == "Ready"
    )
    _wait(f"the runner Deployment {runner} available",
          lambda: (installed.apps.read_namespaced_deployment(runner, namespace).status.available_replicas or 0) >= 1,
          180)  # fmt: skip
    svc = installed.core.read_namespaced_service(runner, namespace)
    return f"http://{svc.spec.cluster_ip}:{svc.spec.ports[0].port}/hooks/{hook}"


# An every-minute Schedule trigger as the editor saves it (its run's output has scheduled_at).
EVERY_MINUTE = testing.canvas_node(
    "node-1", "Scheduler", "scheduler", 1, "Scheduler", x=0,
    selectedValue={"schedule_type": "AtRegularIntervals", "every": 1, "time_span": "Minutes"},
)  # fmt: skip
EVERY_MINUTE["data"]["app_detail"].update(id=3, app_type="ADD_ON")


def test_sign_up_publish_and_a_webhook_through_the_runners_service_runs_the_flow(installed: Installed) -> None:
    """Through the api Service (kubectl port-forward): sign up, verify by the mailed link, sign in, publish a
    Webhook → API Call flow and an every-minute Schedule → API Call flow; the operator runs the first in its own
    runner Deployment; a webhook POSTed to that runner's Service calls the API once, and the Konnect shows the
    run. (The schedule's CronJob is looked at after the upgrade: its first minute passes meanwhile.)"""
    with _api_through_port_forward(installed, RELEASE) as api:
        headers = _sign_up(installed, RELEASE, api)
        reply = testing.publish_canvas(api, headers, testing.webhook_canvas(f"http://target.{RELEASE}.svc/orders"))
        at = [{"key": "at", "value": "{{node-1.scheduled_at}}"}]
        schedule = testing.webhook_canvas(f"http://target.{RELEASE}.svc/tick", trigger=EVERY_MINUTE, body=at)
        scheduled = testing.publish_canvas(api, headers, schedule)
    PUBLISHED[RELEASE] = {"headers": headers, "webhook": reply["konnect_id"], "schedule": scheduled["konnect_id"]}
    konnect_id = reply["konnect_id"]
    url = _runner_url(installed, RELEASE, konnect_id, reply["webhook_url"].split("/hooks/", 1)[1])

    def post() -> str | None:
        got = installed.node.exec("busybox", "wget", "-q", "-O-", "--header", "Content-Type: application/json",
                                  "--post-data", '{"name": "Ada"}', url, check=False, timeout=30)  # fmt: skip
        return got.stdout if got.returncode == 0 else None

    accepted = _wait("the webhook accepted through the runner's Service", post, 60)
    assert '"accepted"' in accepted, accepted
    _wait("the flow's API call", lambda: _calls(installed, RELEASE, "/orders"), 60)
    _wait("runsToday 1", lambda: _konnect_status(installed, RELEASE, konnect_id).get("runsToday") == 1, 90)
    calls = _calls(installed, RELEASE, "/orders")
    assert [body for _, body in calls] == [{"customer": "Ada"}], calls  # one webhook, one call
    status = _konnect_status(installed, RELEASE, konnect_id)
    assert status.get("lastRunStatus") == "SUCCESS", status


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


def _konnects_table(installed: Installed, namespace: str) -> dict[str, dict[str, str]]:
    """`kubectl get konnects` as it prints it: per name, its columns (cut at the header's column starts)."""
    lines = installed.run("kubectl", "get", "konnects", "-n", namespace).splitlines()
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    names = header.split()
    rows = {}
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        rows[cells[0]] = dict(zip(names, cells, strict=True))
    return rows


def test_the_every_minute_schedule_runs_as_a_job_and_kubectl_shows_both_konnects_with_their_runs(
    installed: Installed,
) -> None:
    """The schedule Konnect's CronJob ("* * * * *") starts a Job whose pod runs the tick on the node; the tick's
    run calls the API; `kubectl get konnects` shows both Konnects Ready with their runs today, and the api lists
    each one's task log."""
    published = PUBLISHED[RELEASE]
    cron_name = _child(published["schedule"])
    batch = client.BatchV1Api(installed.api)
    cron = batch.read_namespaced_cron_job(cron_name, RELEASE)
    assert cron.spec.schedule == "* * * * *"

    def succeeded_jobs() -> list[Any]:
        jobs = batch.list_namespaced_job(RELEASE).items
        ours = [j for j in jobs if any(o.kind == "CronJob" and o.name == cron_name
                                       for o in j.metadata.owner_references or [])]  # fmt: skip
        failed = [j.metadata.name for j in ours if (j.status.failed or 0) > 0]
        assert not failed, f"the CronJob's Job failed: {failed}\n" + installed.report(RELEASE)
        return [j for j in ours if (j.status.succeeded or 0) >= 1]

    t0 = time.monotonic()
    jobs = _wait(f"a Job of the CronJob {cron_name} succeeded", succeeded_jobs, 150, 1)
    print(f"\n[chart node] the schedule's first Job succeeded {time.monotonic() - t0:.1f} s into this test",
          file=sys.stderr)  # fmt: skip
    pods = installed.core.list_namespaced_pod(RELEASE, label_selector=f"job-name={jobs[0].metadata.name}").items
    assert pods and pods[0].spec.node_name == installed.node.name and pods[0].status.phase == "Succeeded"
    ticks = _wait("the schedule's API call", lambda: _calls(installed, RELEASE, "/tick"), 60)
    assert all(body.get("at") for _, body in ticks), ticks  # the trigger's scheduled_at, mapped by the flow
    _wait("the schedule's runsToday",
          lambda: _konnect_status(installed, RELEASE, published["schedule"]).get("runsToday"), 90)  # fmt: skip

    table = _konnects_table(installed, RELEASE)
    assert set(table) == {f"konnect-{published['webhook']}", f"konnect-{published['schedule']}"}, table
    for row in table.values():
        assert row["PHASE"] == "Ready", table
        assert int(row["RUNS-TODAY"]) >= 1, table
        assert row["OUTCOME"] == "SUCCESS", table
    with _api_through_port_forward(installed, RELEASE) as api:
        for konnect_id in (published["webhook"], published["schedule"]):
            got = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=published["headers"])
            assert got.status_code == 200, got.text
            logs = got.json()["task_logs"]
            assert logs and {log["status"] for log in logs} == {"SUCCESS"}, logs
            assert all(log["run_id"] for log in logs), logs


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


# The load: from the node's network namespace, webhooks to the runner's Service in bursts, each line of stdin one
# burst of that many webhooks at RATE per second; webhook n has the body {"n": n}. It prints "ready" once it can
# send, and after stdin closes every reply (status code or the exception's name, the run_id of a 2xx, its burst)
# as one JSON list.
LOADER = """import asyncio, json, sys, threading, time
import httpx
url, rate = sys.argv[1], float(sys.argv[2])
bursts, closed, results = [], threading.Event(), []
def read():
    for line in sys.stdin:
        bursts.append(int(line))
    closed.set()
threading.Thread(target=read, daemon=True).start()
async def one(http, n, burst):
    try:
        r = await http.post(url, json={"n": n})
        run_id = r.json().get("run_id") if r.is_success else None
        results.append({"n": n, "burst": burst, "code": r.status_code, "run_id": run_id})
    except Exception as exc:
        results.append({"n": n, "burst": burst, "code": type(exc).__name__, "run_id": None})
async def main():
    tasks, burst = [], 0
    print("ready", flush=True)
    async with httpx.AsyncClient(timeout=20, limits=httpx.Limits(max_connections=64)) as http:
        while bursts or not closed.is_set():
            if not bursts:
                await asyncio.sleep(0.05)
                continue
            count, start = bursts.pop(0), time.monotonic()
            for i in range(count):
                await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
                tasks.append(asyncio.create_task(one(http, len(tasks), burst)))
            burst += 1
        await asyncio.gather(*tasks)
    print(json.dumps(results), flush=True)
asyncio.run(main())
"""
RATE, BURST = 20.0, 60  # webhooks per second; webhooks per burst (one burst per fault and one after them)
FAULT_AFTER = 1.0  # seconds into its burst a pod is deleted


def _jetstream_streams(installed: Installed, namespace: str) -> dict[str, dict[str, Any]]:
    """Every stream (KV buckets included) as a NATS pod's monitoring endpoint reports it: name → its detail."""
    pod = installed.core.read_namespaced_pod(f"{namespace}-konnectz-nats-0", namespace)
    url = f"http://{pod.status.pod_ip}:8222/jsz?accounts=true&streams=true&config=true"
    got = installed.node.exec("busybox", "wget", "-q", "-O-", url, timeout=30)
    details = json.loads(got.stdout).get("account_details") or []
    return {s["name"]: s for account in details for s in account.get("stream_detail") or []}


def _ready(pod: Any) -> bool:
    return pod.metadata.deletion_timestamp is None and any(
        c.type == "Ready" and c.status == "True" for c in pod.status.conditions or []
    )


def _delete_and_recover(
    installed: Installed, namespace: str, selector: str, pick: str | None = None
) -> tuple[str, float]:
    """`kubectl delete pod` one pod of ``selector`` (named ``pick``, else the first), then until the deleted pod is
    gone and as many pods of ``selector`` are Ready as before: (the pod's name, the seconds that took)."""
    pods = [p for p in installed.core.list_namespaced_pod(namespace, label_selector=selector).items if _ready(p)]
    victim = next(p for p in pods if pick is None or p.metadata.name == pick)
    name, uid = victim.metadata.name, victim.metadata.uid
    t0 = time.monotonic()
    installed.run("kubectl", "delete", "pod", name, "-n", namespace, "--wait=false")

    def recovered() -> bool:
        now = installed.core.list_namespaced_pod(namespace, label_selector=selector).items
        return not any(p.metadata.uid == uid for p in now) and sum(map(_ready, now)) >= len(pods)

    try:
        _wait(f"{name} replaced and Ready", recovered, 180, 0.5)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{installed.report(namespace)}") from None
    return name, time.monotonic() - t0


def _task_logs(api: httpx.Client, headers: dict[str, str], konnect_id: int) -> list[dict[str, Any]]:
    """Every task log of the konnect, page by page (each list call answering 200)."""
    logs: list[dict[str, Any]] = []
    page = 1
    while True:
        got = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}&page_size=200&page_index={page}",
                      headers=headers)  # fmt: skip
        assert got.status_code == 200, got.text
        rows = got.json()["task_logs"]
        logs += rows
        if len(rows) < 200:
            return logs
        page += 1


def test_faults_under_load_every_accepted_webhook_ends_as_one_task_log_and_one_call(installed: Installed) -> None:
    """A release with three NATS pods (nats.replicas=3: every stream and bucket on three servers). While webhooks
    arrive at RATE/s through the runner's Service, its runner pod, the api pod, one NATS pod (the leader of
    KZ_RUNS) and the PostgreSQL pod are deleted one after another, each replaced and Ready before the next: every
    webhook answered 2xx ends as exactly one task log, no API call is made twice, and the list calls answer 200."""
    ns = FAULTS
    installed.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    _helpers(installed, ns)
    t0 = time.monotonic()
    installed.run("helm", "install", ns, str(CHART), "-n", ns, *_sets(ns), "--set", "nats.replicas=3")
    pods = installed.wait_all_ready(ns, nats=3)
    print(f"\n[faults] every pod Ready {time.monotonic() - t0:.1f} s after helm install (three NATS pods)",
          file=sys.stderr)  # fmt: skip
    assert sum(p.metadata.labels.get("app.kubernetes.io/component") == "nats" for p in pods) == 3

    with _api_through_port_forward(installed, ns) as api:
        headers = _sign_up(installed, ns, api)
        canvas = testing.webhook_canvas(f"http://target.{ns}.svc/load", body=[{"key": "n", "value": "{{node-1.n}}"}])
        reply = testing.publish_canvas(api, headers, canvas)
    konnect_id = reply["konnect_id"]
    PUBLISHED[ns] = {"headers": headers, "webhook": konnect_id}
    url = _runner_url(installed, ns, konnect_id, reply["webhook_url"].split("/hooks/", 1)[1])
    PUBLISHED[ns]["url"] = url

    # Every stream and bucket the platform made is kept on three servers, each replica current.
    streams = _jetstream_streams(installed, ns)
    assert {"KZ_RUNS", "KZ_EVENTS"} <= set(streams), sorted(streams)
    replicas = {name: (s["config"]["num_replicas"], len((s.get("cluster") or {}).get("replicas") or []))
                for name, s in streams.items()}  # fmt: skip
    assert {r for r in replicas.values()} == {(3, 2)}, replicas  # 3 replicas: the leader and two followers
    print(f"[faults] {len(streams)} streams, each with 3 replicas: {sorted(streams)}", file=sys.stderr)
    runs_leader = streams["KZ_RUNS"]["cluster"]["leader"]

    deployment = installed.apps.read_namespaced_deployment(_child(konnect_id), ns)
    runner_selector = ",".join(f"{k}={v}" for k, v in deployment.spec.selector.match_labels.items())
    component = f"app.kubernetes.io/instance={ns},app.kubernetes.io/component="
    loader = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{installed.node.netns}", "--", sys.executable, "-c", LOADER, url, str(RATE)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert loader.stdin is not None and loader.stdout is not None
    recovery: list[tuple[str, float]] = []
    try:
        assert loader.stdout.readline().strip() == "ready"  # started (Python and httpx imported: seconds under load)
        for selector, pick in ((runner_selector, None), (component + "api", None), (component + "nats", runs_leader),
                               (component + "postgresql", None)):  # fmt: skip
            loader.stdin.write(f"{BURST}\n")
            loader.stdin.flush()
            time.sleep(FAULT_AFTER)  # the burst has begun (it goes on while the pod goes and comes back)
            recovery.append(_delete_and_recover(installed, ns, selector, pick))
        loader.stdin.write(f"{BURST}\n")  # and one burst after every pod is back
        out, _ = loader.communicate(timeout=120)
    finally:
        if loader.poll() is None:
            loader.kill()
            loader.wait(10)
    results = json.loads(out)
    assert len(results) == BURST * 5, len(results)
    accepted = {r["run_id"]: r["n"] for r in results if isinstance(r["code"], int) and 200 <= r["code"] < 300}
    refused: dict[str, int] = {}
    for r in results:
        if r["run_id"] is None:
            refused[str(r["code"])] = refused.get(str(r["code"]), 0) + 1
    assert len(accepted) == sum(1 for r in results if r["run_id"]), "a run_id answered twice"
    # After the faults, every webhook is accepted again.
    assert [r for r in results if r["burst"] == 4 and not r["run_id"]] == []

    # Bounded: every accepted run's task log arrives (task events wait in KZ_EVENTS while the api or PostgreSQL is
    # away; runs wait in KZ_RUNS while the runner is).
    t_drain = time.monotonic()
    with _api_through_port_forward(installed, ns) as api:

        def all_logged() -> list[dict[str, Any]] | None:
            logs = _task_logs(api, headers, konnect_id)
            return logs if set(accepted) <= {log["run_id"] for log in logs} else None

        try:
            logs = _wait("a task log of every accepted webhook", all_logged, 240, 2)
        except AssertionError:
            logs = _task_logs(api, headers, konnect_id)
            missing = sorted(set(accepted) - {log["run_id"] for log in logs})
            lost = sorted(accepted[m] for m in missing)[:50]
            raise AssertionError(
                f"{len(missing)} of {len(accepted)} accepted runs without a task log: n={lost}\n" + installed.report(ns)
            ) from None
        drained = time.monotonic() - t_drain
        # the list calls after recovery
        assert api.get("/api/v1/konnects", headers=headers).status_code == 200
        assert api.get("/api/v1/task_logs/logs", headers=headers).status_code == 200
        time.sleep(3)  # a late duplicate (a run delivered twice) would arrive now: then the counts below differ
        logs = _task_logs(api, headers, konnect_id)
        failed_tasks = {  # what the runs that did not succeed say, for the figures
            log["id"]: api.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).text
            for log in logs
            if log["status"] != "SUCCESS"
        }
    calls = _calls(installed, ns, "/load")
    per_n: dict[int, int] = {}
    for _, body in calls:
        per_n[int(body["n"])] = per_n.get(int(body["n"]), 0) + 1
    run_ids = [log["run_id"] for log in logs]
    statuses: dict[str, int] = {}
    for log in logs:
        statuses[log["status"]] = statuses.get(log["status"], 0) + 1
    figures = {
        "sent": len(results), "2xx": len(accepted), "not 2xx": refused, "task logs": len(logs),
        "task log statuses": statuses, "API calls": len(calls),
        "duplicate task logs": len(run_ids) - len(set(run_ids)),
        "task logs of webhooks not answered 2xx": len(set(run_ids) - set(accepted)),  # stored, the reply lost
        "duplicate calls": sum(c - 1 for c in per_n.values() if c > 1),
        "recovery s": {name: round(s, 1) for name, s in recovery}, "drain s": round(drained, 1),
        "attempts > 1": sum(1 for log in logs if log.get("attempts", 1) > 1),
    }  # fmt: skip
    per_burst: dict[int, dict[str, int]] = {}
    for r in results:
        codes = per_burst.setdefault(r["burst"], {})
        codes[str(r["code"])] = codes.get(str(r["code"]), 0) + 1
    print(f"[faults] {json.dumps(figures)}\n[faults] replies per burst (one per fault, then one after): {per_burst}",
          file=sys.stderr)  # fmt: skip
    for log in logs:
        if log["status"] != "SUCCESS":
            got = failed_tasks[log["id"]]
            print(f"[faults] {log['status']} n={accepted.get(log['run_id'])} attempts={log.get('attempts')}: "
                  f"{json.dumps(log['data'])[:600]} tasks: {got[:1200]}", file=sys.stderr)  # fmt: skip
    assert figures["duplicate task logs"] == 0, figures
    assert figures["duplicate calls"] == 0, sorted(n for n, c in per_n.items() if c > 1)
    assert sorted(set(accepted) - set(run_ids)) == [], figures
    # Every accepted run whose task log is SUCCESS called the API exactly once (its n in the call's body).
    by_run = {log["run_id"]: log for log in logs}
    uncalled = [accepted[r] for r in accepted if by_run[r]["status"] == "SUCCESS" and per_n.get(accepted[r]) != 1]
    assert uncalled == [], (uncalled, figures)
    assert statuses.get("SUCCESS", 0) >= len(accepted) * 0.9, figures  # the faults cost a few runs, not most


# One webhook ({"n": -1}) from the node's network namespace: its status code and body, or the exception's name.
POST_ONCE = """import httpx, sys
try:
    r = httpx.post(sys.argv[1], json={"n": -1}, timeout=30)
    print(r.status_code, r.text)
except httpx.HTTPError as exc:
    print(type(exc).__name__, exc)
"""


def test_helm_uninstall_leaves_the_konnects_and_their_runners(installed: Installed) -> None:
    """What `helm uninstall` alone does to a release with a published flow (charts/konnectz/README.md says it):
    the release's own objects go; the Konnect stays, and so do its runner Deployment and Service (the operator
    made them, owned by the Konnect); deleting the Konnect afterwards, with no operator left, still removes them
    (Kubernetes' garbage collector follows their ownerReferences; the Konnect has no finalizer)."""
    ns = FAULTS
    konnect = f"konnect-{PUBLISHED[ns]['webhook']}"
    runner = _child(PUBLISHED[ns]["webhook"])
    installed.run("helm", "uninstall", ns, "-n", ns, "--wait", "--timeout", "3m")
    _wait("the release's pods gone", lambda: not installed.core.list_namespaced_pod(
        ns, label_selector=f"app.kubernetes.io/instance={ns}").items, 120)  # fmt: skip
    custom = client.CustomObjectsApi(installed.api)
    left = custom.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, konnect)
    assert not left["metadata"].get("finalizers"), left["metadata"]
    deployment = installed.apps.read_namespaced_deployment(runner, ns)
    assert [o.kind for o in deployment.metadata.owner_references or []] == ["Konnect"]
    installed.core.read_namespaced_service(runner, ns)
    installed.core.read_namespaced_config_map(runner, ns)  # the flow the runner reads
    pods = installed.core.list_namespaced_pod(ns, label_selector=",".join(
        f"{k}={v}" for k, v in deployment.spec.selector.match_labels.items())).items  # fmt: skip
    print(f"\n[uninstall] after helm uninstall: Konnect {konnect} and Deployment {runner} left, its pods: "
          f"{[(p.metadata.name, p.status.phase, _ready(p)) for p in pods]}", file=sys.stderr)  # fmt: skip
    assert pods, "the runner's pods went with the release"
    # They run on, but with the release's NATS gone nothing can store a run: a webhook is not accepted.
    got = installed.node.exec(sys.executable, "-c", POST_ONCE, PUBLISHED[ns]["url"], timeout=90)
    print(f"[uninstall] a webhook to the runner left behind: {got.stdout.strip()}", file=sys.stderr)
    assert got.stdout.split()[:1] == ["503"] and "not connected to NATS" in got.stdout, got.stdout
    custom.delete_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, konnect)

    def children_gone() -> bool:
        try:
            installed.apps.read_namespaced_deployment(runner, ns)
            return False
        except ApiException as exc:
            return exc.status == 404

    _wait("the Konnect's runner Deployment collected", children_gone, 120)
    services = installed.core.list_namespaced_service
    _wait("the Konnect's Service collected", lambda: not any(s.metadata.name == runner for s in services(ns).items), 60)
    maps = installed.core.list_namespaced_config_map
    _wait("the Konnect's ConfigMap collected", lambda: not any(c.metadata.name == runner for c in maps(ns).items), 60)
    for helper in ("mail", "target"):  # the test's own (Python as pid 1 ignores SIGTERM: not the node's 30 s wait)
        installed.core.delete_namespaced_pod(helper, ns, grace_period_seconds=0)
