"""The Konnect CRD and the Kopf operator against a real kube-apiserver (fixtures in conftest.py).

The operator runs in-process with ``kopf.testing.KopfRunner``; the controller-manager of the
test cluster does the garbage collection of the children when a Konnect is deleted.
"""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from unittest import mock

import pytest
from kopf.testing import KopfRunner
from kubernetes import client
from kubernetes.client import ApiException

from konnectz_contracts.resource import GROUP, PLURAL, VERSION, last_run_status, token_secret
from konnectz_operator.apply import Kube

pytestmark = pytest.mark.k8s

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "crds" / "konnects.konnectz.io.yaml"

TOKEN = "whk_" + "0123456789abcdef" * 2
T = TypeVar("T")


def wait_for(what: str, fn: Callable[[], T | None], timeout: float = 60.0) -> T:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            value = fn()
            if value:
                return value
            last = value
        except ApiException as exc:
            last = f"{exc.status} {exc.reason}"
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def runner_flow_of(konnect_id: int) -> dict[str, Any]:
    """The flow a runner executes (ids and token in it): what the api compiles."""
    flow = konnect_body("unused", konnect_id)["spec"]["flow"]
    return {**flow, "konnect_id": konnect_id, "owner_id": 7, "trigger": {"kind": "webhook", "token": TOKEN}}


def konnect_body(name: str, konnect_id: int = 42, **spec: Any) -> dict[str, Any]:
    """A Konnect as the api writes it: no ids and no token in the flow; the token in a Secret."""
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Konnect",
        "metadata": {"name": name},
        "spec": {
            "konnectId": konnect_id,
            "ownerId": 7,
            "displayName": "Order to CRM",
            "trigger": {"kind": "webhook", "tokenSecret": f"{name}-trigger"},
            "flow": {
                "version": 1,
                "name": "Order to CRM",
                "trigger_id": "node-1",
                "trigger": {"kind": "webhook"},
                "steps": [
                    {
                        "kind": "api_call",
                        "id": "node-2",
                        "name": "Create contact",
                        "method": "POST",
                        "url": "https://crm.example.com/api/contacts",
                        "body": [{"key": "name", "value": "{{node-1.body.name}}"}],
                    }
                ],
            },
            **spec,
        },
    }


@pytest.fixture(scope="module")
def konnect_crd(kube) -> None:
    kube.run(kube.kubectl, "apply", "--server-side", "--force-conflicts", "-f", str(CRD))
    kube.run(kube.kubectl, "wait", "--for=condition=Established", "--timeout=60s", "crd/konnects.konnectz.io")


@pytest.fixture
def operator(kube, namespace, konnect_crd, monkeypatch) -> Iterator[KopfRunner]:
    monkeypatch.setenv("KUBECONFIG", str(kube.kubeconfig))
    monkeypatch.setenv("KONNECTZ_RUNNER_IMAGE", "konnectz-runner:test")
    monkeypatch.setenv("KONNECTZ_NATS_URL", "nats://nats.example:4222")
    monkeypatch.setenv("KONNECTZ_WEBHOOK_BASE_URL", "https://hooks.example.com")
    args = ["run", "--standalone", "--verbose", "-n", namespace, "-m", "konnectz_operator.handlers"]
    with KopfRunner(args, timeout=120) as runner:
        yield runner
    assert runner.exception is None, runner.output
    assert runner.exit_code == 0, runner.output


def _objects(kube) -> Kube:
    """The operator's own client, logged in with the test cluster's kubeconfig."""
    with mock.patch.dict(os.environ, {"KUBECONFIG": str(kube.kubeconfig)}):
        return Kube()


def _custom(kube) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(kube.api)


def _create(kube, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """Create the Konnect and, as the api does, the Secret of its webhook token."""
    created = _custom(kube).create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    name = body["metadata"]["name"]
    secret = token_secret(name, namespace, TOKEN, owner_uid=created["metadata"]["uid"])
    client.CoreV1Api(kube.api).create_namespaced_secret(namespace, secret)
    return dict(created)


def _get_konnect(kube, namespace: str, name: str) -> dict[str, Any]:
    return _custom(kube).get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)


def test_konnect_becomes_ready_with_owned_children_and_is_garbage_collected(kube, namespace, operator):
    objects = _objects(kube)
    created = _create(kube, namespace, konnect_body("orders"))
    uid = created["metadata"]["uid"]

    konnect = wait_for(
        "Konnect phase Ready",
        lambda: (k := _get_konnect(kube, namespace, "orders")).get("status", {}).get("phase") == "Ready" and k,
    )
    status = konnect["status"]
    assert status["webhookUrl"] == "https://hooks.example.com/hooks/<secret:orders-trigger>"
    assert TOKEN not in json.dumps(konnect)  # spec, status, Kopf's last-handled annotation
    assert status["observedGeneration"] == konnect["metadata"]["generation"]
    (ready,) = [c for c in status["conditions"] if c["type"] == "Ready"]
    assert ready["status"] == "True"
    assert konnect["spec"]["paused"] is False  # defaulted by the CRD schema
    assert konnect["spec"]["runnerMode"] == "dedicated"

    children = {}
    for api_version, kind in (("v1", "ConfigMap"), ("apps/v1", "Deployment"), ("v1", "Service")):
        obj = objects.get(api_version, kind, namespace, "kz-orders")
        assert obj is not None, kind
        (ref,) = obj["metadata"]["ownerReferences"]
        assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == ("Konnect", "orders", uid, True)
        assert obj["metadata"]["labels"]["konnectz.io/konnect"] == "orders"
        children[kind] = obj
    assert TOKEN not in children["ConfigMap"]["data"]["flow.json"]
    assert '"konnect_id": 42' in children["ConfigMap"]["data"]["flow.json"]
    container = children["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    token_ref = {
        "name": "KONNECTZ_TRIGGER_TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "orders-trigger", "key": "token"}},
    }
    assert token_ref in container["env"]
    assert container["image"] == "konnectz-runner:test"
    assert {"name": "KONNECTZ_NATS_URL", "value": "nats://nats.example:4222"} in container["env"]
    assert objects.get("batch/v1", "CronJob", namespace, "kz-orders") is None

    out = kube.run(kube.kubectl, "get", "kz", "orders", "-n", namespace).stdout
    assert "Ready" in out and "42" in out

    # Pausing scales the runner to zero and is reported.
    _custom(kube).patch_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, "orders", {"spec": {"paused": True}}
    )
    wait_for("Paused phase", lambda: _get_konnect(kube, namespace, "orders")["status"].get("phase") == "Paused")
    dep = objects.get("apps/v1", "Deployment", namespace, "kz-orders")
    assert dep is not None and dep["spec"]["replicas"] == 0

    _custom(kube).delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "orders")
    for api_version, kind in (("v1", "ConfigMap"), ("apps/v1", "Deployment"), ("v1", "Service")):
        wait_for(
            f"{kind} garbage-collected",
            lambda av=api_version, k=kind: objects.get(av, k, namespace, "kz-orders") is None,
        )


def _events(kube, namespace: str, name: str) -> list[dict[str, Any]]:
    items = client.CoreV1Api(kube.api).list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}")
    return [{"reason": e.reason, "message": e.message, "type": e.type} for e in items.items]


ALLOWED_IMAGE = "registry.example.com/konnectz-runner:allowed"


@pytest.fixture
def allowed_images(monkeypatch) -> None:
    """The administrator's allow list (chart value operator.allowedRunnerImages), set before the operator starts."""
    monkeypatch.setenv("KONNECTZ_RUNNER_IMAGES", f"{ALLOWED_IMAGE},other.example.com/runner:2")


def test_a_konnect_naming_its_own_image_is_refused_and_an_allowed_one_runs(kube, namespace, allowed_images, operator):
    objects = _objects(kube)

    def phase(name: str) -> tuple[str | None, str]:
        status = _get_konnect(kube, namespace, name).get("status") or {}
        return status.get("phase"), str(status.get("message") or "")

    # An image of the author's choosing: refused in the status, no workload, no token Secret.
    _create(kube, namespace, konnect_body("miner", 51, image="evil.example.com/miner:1"))
    message = wait_for("the image to be refused", lambda: phase("miner")[0] == "Failed" and phase("miner")[1])
    assert "image evil.example.com/miner:1 is not allowed" in message
    assert objects.get("apps/v1", "Deployment", namespace, "kz-miner") is None
    assert objects.get("v1", "ConfigMap", namespace, "kz-miner") is None

    # An image of the allow list passes.
    _create(kube, namespace, konnect_body("pinned", 52, image=ALLOWED_IMAGE))
    wait_for("the allowed image to run", lambda: phase("pinned")[0] == "Ready")
    deployment = objects.get("apps/v1", "Deployment", namespace, "kz-pinned")
    assert deployment is not None
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == ALLOWED_IMAGE

    # A running flow keeps running through a refused edit: its Deployment is neither deleted nor changed.
    _custom(kube).patch_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, "pinned", {"spec": {"image": "evil.example.com/miner:1"}}
    )
    wait_for("the edit to be refused", lambda: phase("pinned")[0] == "Failed")
    time.sleep(1.0)
    kept = objects.get("apps/v1", "Deployment", namespace, "kz-pinned")
    assert kept is not None and kept["metadata"]["uid"] == deployment["metadata"]["uid"]
    assert kept["spec"]["template"]["spec"]["containers"][0]["image"] == ALLOWED_IMAGE
    # Back on the default image: it runs again.
    _custom(kube).patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "pinned", {"spec": {"image": None}})
    wait_for("the default image to run", lambda: phase("pinned")[0] == "Ready")
    image = objects.get("apps/v1", "Deployment", namespace, "kz-pinned")["spec"]["template"]["spec"]["containers"][0]
    assert image["image"] == "konnectz-runner:test"


def test_a_deleted_or_edited_child_returns_within_ten_seconds_and_an_event_says_so(kube, namespace, operator):
    objects = _objects(kube)
    _create(kube, namespace, konnect_body("drift"))
    wait_for("Ready", lambda: _get_konnect(kube, namespace, "drift").get("status", {}).get("phase") == "Ready")
    wait_for("a Reconciled event", lambda: any(e["reason"] == "Reconciled" for e in _events(kube, namespace, "drift")))
    first = objects.get("apps/v1", "Deployment", namespace, "kz-drift")
    assert first is not None

    objects.delete("apps/v1", "Deployment", namespace, "kz-drift")
    back = wait_for(
        "the Deployment recreated",
        lambda: (
            (d := objects.get("apps/v1", "Deployment", namespace, "kz-drift"))
            and d["metadata"]["uid"] != first["metadata"]["uid"]
            and d
        ),
        timeout=10,
    )
    assert back["metadata"]["ownerReferences"][0]["name"] == "drift"

    # An edit of a managed field is reverted; the edit of the image is drift, the status is not.
    edited = dict(back)
    edited["spec"]["template"]["spec"]["containers"][0]["image"] = "evil:latest"
    # No resourceVersion: the controller-manager may have updated the Deployment since it was read.
    meta = {"name": "kz-drift", "namespace": namespace}
    objects.patch({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": edited["spec"]})
    wait_for(
        "the image restored",
        lambda: (
            objects.get("apps/v1", "Deployment", namespace, "kz-drift")["spec"]["template"]["spec"]["containers"][0][
                "image"
            ]
            == "konnectz-runner:test"
        ),
        timeout=10,
    )
    configmap = objects.get("v1", "ConfigMap", namespace, "kz-drift")
    assert configmap is not None
    objects.patch({**configmap, "data": {"flow.json": "{}"}})
    wait_for(
        "the flow restored",
        lambda: '"konnect_id": 42' in objects.get("v1", "ConfigMap", namespace, "kz-drift")["data"]["flow.json"],
        timeout=10,
    )
    wait_for(
        "a DriftRepaired event",
        lambda: any(e["reason"] == "DriftRepaired" for e in _events(kube, namespace, "drift")),
    )
    _custom(kube).delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "drift")


def test_a_flow_that_disagrees_with_the_spec_fails_with_a_message(kube, namespace, operator):
    body = konnect_body("mismatch")
    body["spec"]["trigger"] = {"kind": "schedule", "schedule": "0 * * * *"}
    _custom(kube).create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

    konnect = wait_for(
        "Konnect phase Failed",
        lambda: (k := _get_konnect(kube, namespace, "mismatch")).get("status", {}).get("phase") == "Failed" and k,
    )
    assert "differs from spec.trigger.kind" in konnect["status"]["message"]
    assert _objects(kube).get("apps/v1", "Deployment", namespace, "kz-mismatch") is None
    _custom(kube).delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "mismatch")


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda b: b["spec"].update(konnectId=0), "spec.konnectId"),
        (lambda b: b["spec"]["trigger"].pop("kind"), "spec.trigger.kind"),
        (lambda b: b["spec"].update(trigger={"kind": "schedule"}), "trigger.schedule is required"),
        (lambda b: b["spec"].update(runnerMode="elsewhere"), "spec.runnerMode"),
        (lambda b: b["spec"]["flow"]["steps"][0].update(method="FETCH"), "spec.flow.steps[0].method"),
        (lambda b: b["spec"]["flow"]["steps"][0].update(kind="teleport"), "spec.flow.steps[0].kind"),
    ],
)
def test_the_api_server_rejects_invalid_konnects(kube, namespace, konnect_crd, mutate, field):
    body = konnect_body("invalid")
    mutate(body)
    with pytest.raises(ApiException) as info:
        _custom(kube).create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    assert info.value.status == 422
    assert field in (info.value.body or "")


WAIT_STEP = {
    "kind": "wait",
    "id": "node-3",
    "name": "Wait",
    "timeout": 2,
    "timeout_unit": "hours",
    "on_timeout": "stop",
}
APPROVAL_STEP = {
    "kind": "approval",
    "id": "node-4",
    "name": "Approve",
    "approvers": "boss@example.com",
    "message": "Ship {{node-1.body.order}}?",
    "timeout": 1,
    "timeout_unit": "days",
    "on_timeout": "fail",
}


def test_waits_and_approvals_are_in_the_crds_step_union(kube, namespace, konnect_crd):
    """A Konnect whose flow waits for a call and for an approval (docs/waits.md) is accepted as the api
    writes it; one whose wait has no timeout, or whose approval has no approvers, is refused saying so."""
    body = konnect_body("waits")
    body["spec"]["flow"]["steps"][:0] = [WAIT_STEP, APPROVAL_STEP]
    created = _custom(kube).create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    assert created["spec"]["flow"]["steps"][:2] == [WAIT_STEP, APPROVAL_STEP]  # nothing pruned
    _custom(kube).delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "waits")
    for step, missing, message in (
        (WAIT_STEP, "timeout", "wait needs timeout"),
        (APPROVAL_STEP, "approvers", "approval needs approvers, timeout"),
    ):
        bad = konnect_body(f"bad-{step['kind']}")
        bad["spec"]["flow"]["steps"][:0] = [{k: v for k, v in step.items() if k != missing}]
        with pytest.raises(ApiException) as info:
            _custom(kube).create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, bad)
        assert info.value.status == 422 and message in (info.value.body or ""), info.value.body


def test_every_rendered_child_is_accepted_and_re_applied_by_the_api_server(kube, namespace):
    """The renders of all trigger kinds (schedule included, which the runner's FlowSpec does not
    accept yet) are valid objects, and create-or-patch converges them, clearing removed fields."""
    from konnectz_operator.apply import apply
    from konnectz_operator.config import OperatorSettings
    from konnectz_operator.render import render_children

    objects = _objects(kube)
    settings = OperatorSettings(webhook_ingress_host="hooks.example.com", webhook_ingress_class="nginx")
    webhook = konnect_body("hooked")
    webhook["metadata"]["namespace"] = namespace
    schedule = konnect_body(
        "ticking", trigger={"kind": "schedule", "schedule": "*/5 * * * *", "timezone": "Europe/Berlin"}
    )
    schedule["metadata"]["namespace"] = namespace

    for body in (webhook, schedule):
        for child in render_children(body, settings, TOKEN):
            assert apply(objects, child) == "created", child["kind"]
    ingress = objects.get("networking.k8s.io/v1", "Ingress", namespace, "kz-hooked")
    assert ingress is not None
    assert ingress["spec"]["rules"][0]["http"]["paths"][0]["path"] == f"/hooks/{TOKEN}"
    cron = objects.get("batch/v1", "CronJob", namespace, "kz-ticking")
    assert cron is not None and cron["spec"]["timeZone"] == "Europe/Berlin"

    # Removing the time zone and pausing: the patch must clear timeZone, not keep the old one.
    schedule["spec"]["trigger"].pop("timezone")
    schedule["spec"]["paused"] = True
    for child in render_children(schedule, settings):
        assert apply(objects, child) == "patched"
    cron = objects.get("batch/v1", "CronJob", namespace, "kz-ticking")
    assert cron is not None
    assert "timeZone" not in cron["spec"]
    assert cron["spec"]["suspend"] is True


def test_the_api_publishes_with_server_side_apply_and_kubectl_get_tells_what_runs(kube, namespace, operator):
    """KubernetesDeployer → Konnect → operator → status; `kubectl get konnects` shows the columns people need."""
    import asyncio
    from datetime import UTC, datetime

    from konnectz_api.services.deployer import DeployConflict, DeployError, KubernetesDeployer
    from konnectz_contracts.events import TaskEvent
    from konnectz_contracts.spec import FlowSpec

    flow = FlowSpec.model_validate(runner_flow_of(77))
    deployer = KubernetesDeployer(namespace, api_client=kube.api)
    asyncio.run(deployer.publish(flow, owner_email="ada@example.com"))
    ready = wait_for("the published Konnect to be Ready", lambda: _ready(kube, namespace, "konnect-77"))
    assert ready["status"]["entrypoint"] == "https://hooks.example.com/hooks/<secret:konnect-77-trigger>"
    assert ready["metadata"]["managedFields"][0]["manager"] == "konnectz-api"
    assert TOKEN not in json.dumps(ready)
    secret = client.CoreV1Api(kube.api).read_namespaced_secret("konnect-77-trigger", namespace)
    assert base64.b64decode(secret.data["token"]).decode() == TOKEN
    assert secret.metadata.owner_references[0].uid == ready["metadata"]["uid"]  # goes with the Konnect

    # Publishing a change is an apply of the same object, not a conflict.
    asyncio.run(deployer.publish(flow.model_copy(update={"name": "Order to CRM v2"}), owner_email="ada@example.com"))
    assert _get_konnect(kube, namespace, "konnect-77")["spec"]["displayName"] == "Order to CRM v2"

    # A field changed by someone else (kubectl) is not overwritten: the publish is a conflict.
    edit = [{"op": "replace", "path": "/spec/flow/steps/0/url", "value": "https://crm.example.com/edited"}]
    kube.run(kube.kubectl, "patch", "konnect", "konnect-77", "-n", namespace, "--type=json", "-p", json.dumps(edit))
    other = flow.model_copy(update={"steps": [flow.steps[0].model_copy(update={"url": "https://crm.example.com/v9"})]})
    with pytest.raises(DeployConflict, match="kubectl-patch"):
        asyncio.run(deployer.publish(other, owner_email="ada@example.com"))
    assert _get_konnect(kube, namespace, "konnect-77")["spec"]["flow"]["steps"][0]["url"].endswith("/edited")
    same = flow.model_copy(
        update={"steps": [flow.steps[0].model_copy(update={"url": "https://crm.example.com/edited"})]}
    )
    asyncio.run(deployer.publish(same, owner_email="ada@example.com"))  # agreeing with the cluster: fine

    now = datetime.now(UTC)
    run = TaskEvent(
        run_id="run-1",
        konnect_id=77,
        owner_id=7,
        konnect_name="Order to CRM v2",
        status="ERROR",
        started_at=now,
        finished_at=now,
        trigger_id="node-1",
        trigger_output={},
        steps=[],
    )
    asyncio.run(deployer.record_run(run, runs_today=3, failures_today=1))
    # The api writes the run into an annotation; the operator, the one writer of the status, copies it.
    recorded = _get_konnect(kube, namespace, "konnect-77")
    assert last_run_status(recorded["metadata"]["annotations"])["lastRunStatus"] == "ERROR"
    wait_for(
        "the run in the status",
        lambda: (_get_konnect(kube, namespace, "konnect-77").get("status") or {}).get("failuresToday") == 1,
    )
    table = kube.run(kube.kubectl, "get", "konnects", "-n", namespace).stdout.splitlines()
    header = table[0].split()
    assert header == [
        "NAME", "KONNECT-ID", "OWNER", "TRIGGER", "PHASE", "ENTRYPOINT", "LAST-RUN", "OUTCOME", "RUNS-TODAY",
        "FAILURES-TODAY", "AGE",
    ]  # fmt: skip
    row = dict(zip(header, table[1].split(), strict=False))
    assert row["OWNER"] == "ada@example.com" and row["TRIGGER"] == "webhook" and row["PHASE"] == "Ready"
    assert row["ENTRYPOINT"].endswith("<secret:konnect-77-trigger>") and row["OUTCOME"] == "ERROR"
    assert (row["RUNS-TODAY"], row["FAILURES-TODAY"]) == ("3", "1")
    # The operator's next reconcile keeps the run fields (the status it copied them into).
    _custom(kube).patch_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, "konnect-77", {"spec": {"paused": True}}
    )
    paused = wait_for(
        "Paused", lambda: (k := _get_konnect(kube, namespace, "konnect-77"))["status"]["phase"] == "Paused" and k
    )
    assert paused["status"]["lastRunStatus"] == "ERROR"

    asyncio.run(deployer.unpublish(77))
    asyncio.run(deployer.unpublish(77))  # already gone: not an error
    with pytest.raises(ApiException) as gone:
        _get_konnect(kube, namespace, "konnect-77")
    assert gone.value.status == 404
    asyncio.run(deployer.record_run(run))  # nothing left to annotate: not an error either

    refused = KubernetesDeployer("Not_A_Namespace", api_client=kube.api)
    with pytest.raises(DeployError, match=r"Kubernetes refused to publish the konnect \(\d{3}\)"):
        asyncio.run(refused.publish(flow))


def _ready(kube, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        konnect = _get_konnect(kube, namespace, name)
    except ApiException:
        return None
    return konnect if (konnect.get("status") or {}).get("phase") == "Ready" else None


def test_a_konnect_is_pending_from_the_start_and_a_token_in_its_spec_is_refused(kube, namespace, konnect_crd, tmp_path):
    """No operator here: PHASE shows Pending all the same. kubectl (strict field validation) refuses
    a token in the spec, naming the field."""
    _custom(kube).create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, konnect_body("waiting"))
    assert _get_konnect(kube, namespace, "waiting")["status"]["phase"] == "Pending"
    row = kube.run(kube.kubectl, "get", "konnect", "waiting", "-n", namespace, "--no-headers").stdout.split()
    assert "Pending" in row

    leaky = konnect_body("leaky")
    leaky["spec"]["flow"]["trigger"]["token"] = TOKEN
    path = tmp_path / "leaky.json"
    path.write_text(json.dumps(leaky))
    refused = kube.run(kube.kubectl, "apply", "-n", namespace, "-f", str(path), check=False)
    assert refused.returncode != 0
    assert "spec.flow.trigger.token" in refused.stderr
