"""The Kubernetes path end to end: api (KubernetesDeployer) → Konnect → operator → runner → task log.

The api, PostgreSQL, NATS and SMTP run as local processes (as `make dev` runs them), the api
publishing to the real API server of tests/cluster; the operator runs in-process; the runner that
a Deployment would run is started as a local process from what the operator rendered: the
ConfigMap's flow.json and the container's command and environment.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from kopf.testing import KopfRunner
from kubernetes import client
from kubernetes.client import ApiException

from konnectz_contracts.resource import GROUP, PLURAL, VERSION
from konnectz_devstack import testing
from konnectz_devstack.pytest_plugin import free_port, make_platform
from konnectz_devstack.testing import publish_canvas, sign_up, webhook_canvas

pytestmark = pytest.mark.k8s

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "crds" / "konnects.konnectz.io.yaml"


def wait_until(what: str, fn: Any, timeout: float = 60.0, interval: float = 0.2) -> Any:
    """Until ``fn`` answers something truthy; an ApiException (not made yet) counts as not yet."""
    return testing.wait_until(fn, timeout, interval, what, retry_on=(ApiException,))


EVERY_MINUTE = {
    "id": "node-1",
    "type": "Scheduler",
    "position": {"x": 0, "y": 0},
    "data": {
        "node_id": "node-1",
        "app_detail": {"id": 3, "name": "Scheduler", "app_type": "ADD_ON", "provider": "scheduler", "app_index": 1},
        "selectedValue": {"schedule_type": "AtRegularIntervals", "every": 1, "time_span": "Minutes"},
    },
}


def canvas(endpoint: str, trigger: dict[str, Any] | None = None) -> dict[str, Any]:
    body = [{"key": "customer", "value": "{{node-1.name}}"}, {"key": "at", "value": "{{node-1.scheduled_at}}"}]
    return webhook_canvas(f"{endpoint}/orders", name="Orders on Kubernetes", trigger=trigger, body=body)


def publish(api: httpx.Client, headers: dict[str, str], flow: dict[str, Any]) -> dict[str, Any]:
    """Test & Review of the trigger creates the draft, as the editor does before saving; then publish."""
    return publish_canvas(api, headers, flow)


def runner_env(kube_api: Any, namespace: str, child: str, spec_file: Path, container: Any) -> dict[str, str]:
    """The container's environment, with the ConfigMap's flow.json written to ``spec_file``."""
    spec_file.write_text(client.CoreV1Api(kube_api).read_namespaced_config_map(child, namespace).data["flow.json"])
    env = {**os.environ, **{e.name: e.value for e in container.env if e.value is not None}}
    env.pop("KONNECTZ_CREDENTIALS_KEY", None)  # the test's own setting for the operator; runners never get it
    for item in container.env:
        ref = item.value_from.secret_key_ref if item.value_from else None
        if ref is not None:
            data = client.CoreV1Api(kube_api).read_namespaced_secret(ref.name, namespace).data
            env[item.name] = base64.b64decode(data[ref.key]).decode()
    env.update(KONNECTZ_SPEC_FILE=str(spec_file), KONNECTZ_ALLOW_PRIVATE_NETWORKS="127.0.0.0/8")
    return env


@pytest.fixture(scope="module")
def konnect_crd(kube) -> None:
    kube.run(kube.kubectl, "apply", "--server-side", "--force-conflicts", "-f", str(CRD))
    kube.run(kube.kubectl, "wait", "--for=condition=Established", "--timeout=60s", "crd/konnects.konnectz.io")


def test_a_published_konnect_runs_from_what_the_operator_rendered(
    kube, namespace, konnect_crd, receiver, monkeypatch, operator_nats_env
):
    state = Path(tempfile.mkdtemp(prefix="konnectz-k8s-"))
    state.chmod(0o755)
    runner_port = free_port()
    hooks = f"http://127.0.0.1:{runner_port}"
    platform = make_platform(
        state,
        KONNECTZ_DEPLOYER="kubernetes",
        KONNECTZ_KUBE_NAMESPACE=namespace,
        KUBECONFIG=str(kube.kubeconfig),
        KONNECTZ_WEBHOOK_BASE_URL=hooks,
        # The platform's own runner plays the shared pool: it must not take the dedicated runners' runs.
        KONNECTZ_POOL="true",
    )
    platform.start()
    runner: subprocess.Popen[bytes] | None = None
    monkeypatch.setenv("KUBECONFIG", str(kube.kubeconfig))
    monkeypatch.setenv("KONNECTZ_RUNNER_IMAGE", "konnectz-runner:test")
    operator_nats_env(platform.nats)
    monkeypatch.setenv("KONNECTZ_WEBHOOK_BASE_URL", hooks)
    broker = f"{platform.api_url}/api/v1/internal/credentials"
    monkeypatch.setenv("KONNECTZ_CREDENTIALS_URL", broker)
    monkeypatch.setenv("KONNECTZ_CREDENTIALS_KEY", platform.component_env()["KONNECTZ_CREDENTIALS_KEY"])
    args = ["run", "--standalone", "-n", namespace, "-m", "konnectz_operator.handlers"]
    custom = client.CustomObjectsApi(kube.api)
    try:
        with KopfRunner(args, timeout=180) as operator:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up(api, "kube@example.com", "correct horse battery")
            published = publish(api, headers, canvas(receiver.url))
            name = f"konnect-{published['konnect_id']}"

            def ready() -> dict[str, Any] | None:
                k = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
                return k if (k.get("status") or {}).get("phase") == "Ready" else None

            konnect = wait_until("the Konnect to be Ready", ready)

            def ready_named(other: str) -> dict[str, Any] | None:
                k = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, other)
                return k if (k.get("status") or {}).get("phase") == "Ready" else None

            assert konnect["status"]["webhookUrl"] == f"{hooks}/hooks/<secret:{name}-trigger>"
            assert published["webhook_url"].startswith(hooks + "/hooks/")
            assert "password" not in json.dumps(konnect["spec"]).lower()
            # The webhook token is in the Konnect's Secret, not in the resource (spec, status, annotations).
            assert published["webhook_url"].rsplit("/", 1)[1] not in json.dumps(konnect)
            # The flow list shows the phase of the resource.
            listed = api.get("/api/v1/konnects", headers=headers).json()["konnects"]
            assert [(k["id"], k["phase"]) for k in listed] == [(published["konnect_id"], "Ready")]

            # Start the runner the Deployment describes, with the flow of the ConfigMap.
            apps = client.AppsV1Api(kube.api)
            child = f"kz-{name}"
            container = apps.read_namespaced_deployment(child, namespace).spec.template.spec.containers[0]
            env = runner_env(kube.api, namespace, child, state / "flow.json", container)
            assert env["KONNECTZ_NATS_URL"] == platform.nats.url
            assert env["KONNECTZ_NATS_USER"] == "runner"  # its password came through the secretKeyRef
            assert container.command[:4] == ["python", "-m", "konnectz_runner", "serve"]
            command = [sys.executable, *container.command[1:4], "--host", "127.0.0.1", "--port", str(runner_port)]
            runner = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

            def post() -> httpx.Response | None:
                try:
                    resp = httpx.post(published["webhook_url"], json={"name": "Kay"}, timeout=5)
                except httpx.TransportError:
                    return None
                return resp if resp.status_code == 200 else None

            wait_until("the runner to accept the webhook", post)
            wait_until("the API call", lambda: receiver.requests)
            assert receiver.requests[0]["body"]["customer"] == "Kay"
            logs = wait_until(
                "the task log",
                lambda: api.get(f"/api/v1/task_logs/logs?konnect_id={published['konnect_id']}", headers=headers).json()[
                    "task_logs"
                ],
            )
            assert logs[0]["status"] == "SUCCESS"

            # The runner holds a credential-broker token for its own konnect only (from a Secret).
            assert env["KONNECTZ_CREDENTIALS_URL"] == broker
            token = env["KONNECTZ_CREDENTIALS_TOKEN"]
            assert token not in json.dumps(konnect) and "KONNECTZ_CREDENTIALS_KEY" not in env

            def ask(konnect_id: int) -> int:
                body = {"account_id": 1, "konnect_id": konnect_id}
                return httpx.post(broker, json=body, headers={"Authorization": f"Bearer {token}"}).status_code

            assert ask(published["konnect_id"]) == 403  # the token is good; this konnect uses no such account
            assert ask(published["konnect_id"] + 1) == 401  # another konnect's accounts stay closed

            # The run's outcome reaches the resource, for `kubectl get konnects`.
            wait_until(
                "the last run in the Konnect status",
                lambda: (
                    (custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)["status"]).get(
                        "lastRunStatus"
                    )
                    == "SUCCESS"
                ),
            )

            # A schedule konnect becomes a CronJob; its tick, run as a local process, produces a run.
            scheduled = publish(api, headers, canvas(receiver.url, EVERY_MINUTE))
            cron_name = f"konnect-{scheduled['konnect_id']}"
            wait_until("the schedule Konnect to be Ready", lambda: ready_named(cron_name))
            cron = wait_until(
                "the CronJob",
                lambda: client.BatchV1Api(kube.api).read_namespaced_cron_job(f"kz-{cron_name}", namespace),
            )
            assert cron.spec.schedule == "* * * * *"  # every minute, in UTC (elapsed time)
            assert cron.spec.concurrency_policy == "Forbid"
            tick = cron.spec.job_template.spec.template.spec.containers[0]
            assert tick.command[:4] == ["python", "-m", "konnectz_runner", "tick"]
            env = runner_env(kube.api, namespace, f"kz-{cron_name}", state / "schedule.json", tick)
            seen = len(receiver.requests)
            done = subprocess.run(
                [sys.executable, *tick.command[1:4], "--spec-file", str(state / "schedule.json")],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            wait_until("the scheduled API call", lambda: len(receiver.requests) > seen)
            assert receiver.requests[-1]["body"]["at"].endswith("Z")
            scheduled_logs = wait_until(
                "the scheduled run's task log",
                lambda: api.get(f"/api/v1/task_logs/logs?konnect_id={scheduled['konnect_id']}", headers=headers).json()[
                    "task_logs"
                ],
            )
            assert scheduled_logs[0]["status"] == "SUCCESS"

            # Unpublishing withdraws the resource; the operator's children go with it.
            r = api.post(f"/api/v1/konnects/{published['konnect_id']}/update_status", headers=headers,
                         json={"status": "Draft"})  # fmt: skip
            assert r.status_code == 200, r.text

            def gone() -> bool:
                try:
                    custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
                except ApiException as exc:
                    return exc.status == 404
                return False

            wait_until("the Konnect to be deleted", gone)
        assert operator.exception is None, operator.output
    finally:
        if runner is not None:
            runner.terminate()
            runner.wait(timeout=20)
        platform.stop()
        refused = platform.nats.violations()
        shutil.rmtree(state, ignore_errors=True)
    assert not refused, refused[:10]  # the operator, the api and the runners kept to their NATS grants


def test_a_shared_konnect_runs_in_the_pool_and_leaves_it(
    kube, namespace, konnect_crd, receiver, monkeypatch, operator_nats_env
):
    """runnerMode shared: no workload of its own; the pool runner (here the platform's runner, started
    with KONNECTZ_POOL) gets the flow from NATS, serves its webhook and loses it when the Konnect goes."""
    state = Path(tempfile.mkdtemp(prefix="konnectz-k8s-pool-"))
    state.chmod(0o755)
    platform = make_platform(
        state,
        KONNECTZ_DEPLOYER="kubernetes",
        KONNECTZ_KUBE_NAMESPACE=namespace,
        KUBECONFIG=str(kube.kubeconfig),
        KONNECTZ_RUNNER_MODE="shared",
        KONNECTZ_POOL="true",
    )
    platform.start()
    monkeypatch.setenv("KUBECONFIG", str(kube.kubeconfig))
    operator_nats_env(platform.nats)
    monkeypatch.delenv("KONNECTZ_WEBHOOK_BASE_URL", raising=False)  # webhook URLs of the in-cluster pool Service
    monkeypatch.setenv("KONNECTZ_RUNNER_POOL_SERVICE", "konnectz-runner-pool")
    monkeypatch.setenv("KONNECTZ_RUNNER_POOL_SWEEP_SECONDS", "1")
    args = ["run", "--standalone", "-n", namespace, "-m", "konnectz_operator.handlers"]
    custom = client.CustomObjectsApi(kube.api)
    try:
        with KopfRunner(args, timeout=180) as operator:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up(api, "pool@example.com", "correct horse battery")
            published = publish(api, headers, canvas(receiver.url))
            name = f"konnect-{published['konnect_id']}"

            def ready() -> dict[str, Any] | None:
                k = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
                return k if (k.get("status") or {}).get("phase") == "Ready" else None

            konnect = wait_until("the pool Konnect to be Ready", ready)
            assert konnect["spec"]["runnerMode"] == "shared" and konnect["status"]["runnerMode"] == "shared"
            token = published["webhook_url"].rsplit("/", 1)[1]
            pool_url = f"http://konnectz-runner-pool.{namespace}.svc/hooks/<secret:{name}-trigger>"
            assert konnect["status"]["webhookUrl"] == pool_url and token not in json.dumps(konnect)
            with pytest.raises(ApiException) as info:  # no workload of its own
                client.AppsV1Api(kube.api).read_namespaced_deployment(f"kz-{name}", namespace)
            assert info.value.status == 404

            hook = f"{platform.runner_url}/hooks/{token}"

            def post() -> httpx.Response | None:
                resp = httpx.post(hook, json={"name": "Pooled"}, timeout=5)
                return resp if resp.status_code == 200 else None

            wait_until("the pool runner to serve the webhook", post)
            wait_until("the API call", lambda: receiver.requests)
            assert [r["body"]["customer"] for r in receiver.requests] == ["Pooled"]
            logs = wait_until(
                "the task log",
                lambda: api.get(f"/api/v1/task_logs/logs?konnect_id={published['konnect_id']}", headers=headers).json()[
                    "task_logs"
                ],
            )
            assert [log["status"] for log in logs] == ["SUCCESS"]

            # Deleted behind the api's back: the flow leaves the pool all the same.
            custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
            wait_until("the pool to drop the webhook", lambda: httpx.post(hook, json={}).status_code == 404)
        assert operator.exception is None, operator.output
    finally:
        platform.stop()
        refused = platform.nats.violations()
        shutil.rmtree(state, ignore_errors=True)
    assert not refused, refused[:10]  # the operator, the api and the runners kept to their NATS grants
