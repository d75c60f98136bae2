"""The Kopf handlers' reconcile step with an in-memory stand-in for the Kubernetes API."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import logging
from typing import Any

import kopf
import pytest

from konnectz_contracts.resource import LAST_RUN_ANNOTATION, REFUSED_ANNOTATION, last_run_annotation
from konnectz_operator import handlers
from konnectz_operator.apply import KubeError, connect
from konnectz_operator.config import OperatorSettings
from operator_tests.conftest import TOKEN

log = logging.getLogger("test")


class FakeKube:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        # The api's token Secrets, read by name (not children of the operator).
        self.secrets: dict[tuple[str, str], dict[str, Any]] = {
            ("team-a", "konnect-42-trigger"): {
                "metadata": {"ownerReferences": [{"kind": "Konnect", "uid": "0b5e7c9e-1111-2222-3333-444455556666"}]},
                "data": {"token": base64.b64encode(TOKEN.encode()).decode()},
            }
        }
        self.fail_create: KubeError | None = None
        self.status_patches: list[tuple[str, str, dict[str, Any]]] = []

    @staticmethod
    def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
        return obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"]

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        if self.fail_create is not None:
            raise self.fail_create
        if self._key(obj) in self.objects:
            raise KubeError(status=409, reason="Conflict")
        self.objects[self._key(obj)] = obj
        return obj

    def patch(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.objects[self._key(obj)] = obj
        return obj

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        if kind == "Secret" and (namespace, name) in self.secrets:
            return self.secrets[(namespace, name)]
        return self.objects.get((kind, namespace, name))

    def delete(self, api_version: str, kind: str, namespace: str, name: str) -> bool:
        return self.objects.pop((kind, namespace, name), None) is not None

    def patch_status(self, api_version: str, kind: str, namespace: str, name: str, status: dict[str, Any]) -> None:
        self.status_patches.append((namespace, name, dict(status)))


@pytest.fixture
def kube() -> FakeKube:
    return FakeKube()


@pytest.fixture
def memo(kube: FakeKube, settings: OperatorSettings) -> kopf.Memo:
    return kopf.Memo(config=settings, kube=kube)


def _reconcile(konnect: dict[str, Any], memo: kopf.Memo) -> kopf.Patch:
    patch = kopf.Patch()
    handlers.reconcile(kopf.Body(konnect), patch, memo, log)
    return patch


def test_reconcile_applies_adopted_children_and_reports_ready(konnect, memo, kube, token):
    patch = _reconcile(konnect(), memo)

    assert sorted(kind for kind, _, _ in kube.objects) == ["ConfigMap", "Deployment", "Service"]
    for obj in kube.objects.values():
        (ref,) = obj["metadata"]["ownerReferences"]
        assert ref["kind"] == "Konnect"
        assert ref["uid"] == "0b5e7c9e-1111-2222-3333-444455556666"
        assert ref["controller"] is True
        # kopf.adopt copies the owner's labels next to the rendered ones.
        assert obj["metadata"]["labels"]["konnectz.io/owner-id"] == "7"
        assert obj["metadata"]["labels"]["app.kubernetes.io/name"] == "konnectz-runner"
    status = patch["status"]
    assert status["phase"] == "Ready"
    assert status["observedGeneration"] == 3
    assert status["webhookUrl"] == "http://kz-konnect-42.team-a.svc/hooks/<secret:konnect-42-trigger>"
    # The runner has its URL token from the Secret, by reference; the ConfigMap has none.
    deployment = kube.objects[("Deployment", "team-a", "kz-konnect-42")]
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["KONNECTZ_TRIGGER_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "konnect-42-trigger", "key": "token"}
    assert token not in json.dumps(kube.objects[("ConfigMap", "team-a", "kz-konnect-42")])
    (ready,) = status["conditions"]
    assert (ready["type"], ready["status"], ready["reason"], ready["observedGeneration"]) == (
        "Ready",
        "True",
        "Reconciled",
        3,
    )
    assert "Deployment created" in status["message"]


def test_the_status_names_the_revision_the_runners_serve(konnect, flow, memo, kube):
    # revisions: the api publishes spec.flow.revision; the status says which revision runs.
    published = flow()
    published["revision"] = 3
    patch = _reconcile(konnect(flow=published), memo)
    assert patch["status"]["phase"] == "Ready" and patch["status"]["revision"] == 3
    # The ConfigMap the runner reads carries the same revision (its task events name it).
    config = kube.objects[("ConfigMap", "team-a", "kz-konnect-42")]
    assert json.loads(config["data"]["flow.json"])["revision"] == 3
    published["revision"] = 4
    assert _reconcile(konnect(flow=published), memo)["status"]["revision"] == 4
    # A flow applied without a revision (kubectl): the key is removed (merge patch null).
    patch = _reconcile(konnect(), memo)
    assert "revision" in patch["status"] and patch["status"]["revision"] is None
    assert handlers.live_revision(kopf.Body({"spec": {"flow": {"revision": True}}})) is None
    assert handlers.live_revision(kopf.Body({"spec": {"flow": {"revision": "2"}}})) is None


def test_reconcile_is_idempotent_and_patches_existing_children(konnect, memo, kube):
    _reconcile(konnect(), memo)
    changed = konnect(paused=True)
    patch = _reconcile(changed, memo)

    assert kube.objects[("Deployment", "team-a", "kz-konnect-42")]["spec"]["replicas"] == 0
    assert patch["status"]["phase"] == "Paused"
    assert patch["status"]["conditions"][0]["status"] == "False"
    assert "Deployment patched" in patch["status"]["message"]


def test_switching_to_a_schedule_prunes_the_webhook_workloads(konnect, memo, kube, monkeypatch):
    _reconcile(konnect(), memo)
    # The runner's FlowSpec has no schedule trigger yet: check the operator's side only.
    monkeypatch.setattr(handlers, "validate_konnect", lambda body, token=None: None)
    patch = _reconcile(konnect(trigger={"kind": "schedule", "schedule": "*/5 * * * *"}), memo)

    assert sorted(kind for kind, _, _ in kube.objects) == ["ConfigMap", "CronJob"]
    assert patch["status"]["webhookUrl"] is None
    assert "Deployment/kz-konnect-42 deleted" in patch["status"]["message"]


def test_an_invalid_spec_fails_permanently_with_a_reason(konnect, memo, kube):
    bad = konnect()
    bad["spec"]["flow"]["steps"] = []
    patch = kopf.Patch()
    with pytest.raises(kopf.PermanentError, match=r"spec\.flow is not a valid flow spec: steps"):
        handlers.reconcile(kopf.Body(bad), patch, memo, log)

    assert kube.objects == {}
    assert patch["status"]["phase"] == "Failed"
    assert patch["status"]["conditions"][0]["reason"] == "InvalidKonnect"


@pytest.mark.parametrize(
    ("status", "error", "phase"), [(503, kopf.TemporaryError, "Pending"), (422, kopf.PermanentError, "Failed")]
)
def test_api_errors_map_to_kopf_retry_policy(konnect, memo, kube, status, error, phase):
    kube.fail_create = KubeError(status=status, reason="Injected")
    patch = kopf.Patch()
    with pytest.raises(error):
        handlers.reconcile(kopf.Body(konnect()), patch, memo, log)
    assert patch["status"]["phase"] == phase
    assert patch["status"]["conditions"][0]["reason"] == "ApplyFailed"


def test_a_temporary_error_keeps_the_previous_phase(konnect, memo, kube):
    k = konnect()
    k["status"] = {"phase": "Ready"}
    kube.fail_create = KubeError(status=500, reason="Injected")
    patch = kopf.Patch()
    with pytest.raises(kopf.TemporaryError):
        handlers.reconcile(kopf.Body(k), patch, memo, log)
    assert patch["status"]["phase"] == "Ready"


def _cronjob(last: str | None) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": "kz-konnect-42",
            "namespace": "team-a",
            "ownerReferences": [{"apiVersion": "konnectz.io/v1alpha1", "kind": "Konnect", "name": "konnect-42"}],
        },
        "status": {"lastScheduleTime": last} if last else {},
    }


def test_cronjob_schedule_times_are_copied_to_the_konnect_once(memo, kube):
    for last in (None, "2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z", "2026-01-01T10:05:00Z"):
        handlers.cronjob_scheduled(
            event={"type": "MODIFIED", "object": _cronjob(last)}, body=kopf.Body(_cronjob(last)), memo=memo, logger=log
        )
    assert kube.status_patches == [
        ("team-a", "konnect-42", {"lastScheduleTime": "2026-01-01T10:00:00Z"}),
        ("team-a", "konnect-42", {"lastScheduleTime": "2026-01-01T10:05:00Z"}),
    ]


def _recorded(konnect: dict[str, Any], status: dict[str, Any] | None, **fields: Any) -> dict[str, Any]:
    body = copy.deepcopy(konnect)
    body["metadata"].setdefault("annotations", {})[LAST_RUN_ANNOTATION] = last_run_annotation(fields)
    if status is not None:
        body["status"] = status
    return body


def test_the_run_the_api_recorded_is_copied_into_the_status_once(konnect, memo, kube):
    """The operator is the one writer of the status: the api's last-run annotation is copied into it."""
    konnect = konnect()
    run = {"lastRunTime": "2026-01-01T10:00:00+00:00", "lastRunStatus": "ERROR", "lastRunId": "r1", "runsToday": 3}
    for body in (
        konnect,  # no annotation: nothing to copy
        _recorded(konnect, None, **run),
        _recorded(konnect, {"phase": "Ready", **run}, **run),  # copied already
        _recorded(konnect, {"phase": "Ready", **run}, **{**run, "runsToday": 4, "ignored": "x"}),
    ):
        handlers.konnect_run_recorded(event={"type": "MODIFIED"}, body=kopf.Body(body), memo=memo, logger=log)
    handlers.konnect_run_recorded(
        event={"type": "DELETED"}, body=kopf.Body(_recorded(konnect, None, **run)), memo=memo, logger=log
    )
    assert kube.status_patches == [
        ("team-a", "konnect-42", run),
        ("team-a", "konnect-42", {**run, "runsToday": 4}),
    ]


def test_a_konnect_the_api_refused_shows_why_in_its_status(konnect, memo, kube):
    """The api says why it refuses a Konnect in an annotation; the operator writes it into the status."""
    refused = copy.deepcopy(konnect())
    refused["metadata"]["annotations"] = {REFUSED_ANNOTATION: "has no owner"}
    handlers.konnect_run_recorded(event={"type": "ADDED"}, body=kopf.Body(refused), memo=memo, logger=log)
    refused["status"] = {"phase": "Failed", "message": "has no owner"}
    handlers.konnect_run_recorded(event={"type": "MODIFIED"}, body=kopf.Body(refused), memo=memo, logger=log)
    assert kube.status_patches == [("team-a", "konnect-42", {"phase": "Failed", "message": "has no owner"})]


def test_a_recorded_run_is_not_a_change_to_reconcile(konnect, memo, settings):
    """Kopf's diff base leaves the last-run annotation out: a run recorded renders and applies nothing."""
    konnect = konnect()
    kopf_settings = kopf.OperatorSettings()
    handlers.configure(settings=kopf_settings, memo=memo, logger=log)
    storage = kopf_settings.persistence.diffbase_storage
    recorded = _recorded(konnect, None, lastRunStatus="SUCCESS", lastRunId="r1")
    assert storage.build(body=kopf.Body(recorded)) == storage.build(body=kopf.Body(konnect))
    edited = copy.deepcopy(recorded)
    edited["metadata"]["annotations"]["konnectz.io/owner"] = "grace@example.com"
    assert storage.build(body=kopf.Body(edited)) != storage.build(body=kopf.Body(recorded))


def test_startup_sets_watch_timeouts(memo, settings):
    kopf_settings = kopf.OperatorSettings()
    handlers.configure(settings=kopf_settings, memo=memo, logger=log)
    assert kopf_settings.watching.server_timeout == settings.watch_server_timeout == 300
    assert kopf_settings.watching.client_timeout == settings.watch_client_timeout == 330
    assert kopf_settings.watching.connect_timeout == settings.watch_connect_timeout == 30
    assert kopf_settings.watching.client_timeout > kopf_settings.watching.server_timeout


def test_login_reads_kubeconfig_at_login_time(tmp_path, monkeypatch):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        """
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.1.2.3:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""
    )
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    info = handlers.kube_login()
    assert info.server == "https://10.1.2.3:6443"
    assert info.token == "secret-token"
    assert info.insecure is True
    # The operator's own client uses the same credentials.
    http = connect(info)
    assert http.headers["Authorization"] == "Bearer secret-token"
    assert str(http.base_url).rstrip("/") == "https://10.1.2.3:6443"


class FakePool:
    """The shared runner pool's bucket, in memory."""

    def __init__(self) -> None:
        self.flows: dict[int, str] = {}

    async def publish(self, konnect_id: int, flow_json: str) -> bool:
        changed = self.flows.get(konnect_id) != flow_json
        self.flows[konnect_id] = flow_json
        return changed

    async def withdraw(self, konnect_id: int) -> bool:
        return self.flows.pop(konnect_id, None) is not None

    def call(self, coro, timeout: float = 1.0):
        return asyncio.run(coro)


def test_a_shared_konnect_without_a_pool_fails_saying_so(konnect, memo, kube):
    with pytest.raises(kopf.PermanentError, match="shared runner pool"):
        _reconcile(konnect(runnerMode="shared"), memo)
    assert kube.objects == {}


def test_a_shared_konnect_runs_in_the_pool_and_leaves_it_when_paused_or_dedicated(konnect, memo, kube, settings, token):
    pool = FakePool()
    memo["config"] = settings.model_copy(update={"runner_pool_service": "konnectz-runner-pool"})
    memo["pool"] = pool
    shared = konnect(runnerMode="shared")
    patch = _reconcile(shared, memo)
    assert kube.objects == {}  # no workload of its own
    assert json.loads(pool.flows[42])["konnect_id"] == 42
    assert json.loads(pool.flows[42])["trigger"]["token"] == token  # the pool serves /hooks/<token>
    # The pool's runners bind the konnect's broker token to this resource's uid.
    assert json.loads(pool.flows[42])["resource_uid"] == "0b5e7c9e-1111-2222-3333-444455556666"
    assert patch.status["phase"] == "Ready" and patch.status["runnerMode"] == "shared"
    assert patch.status["webhookUrl"] == "http://konnectz-runner-pool.team-a.svc/hooks/<secret:konnect-42-trigger>"
    assert "handed to the shared runner pool" in patch.status["message"]

    shared["status"] = {"runnerMode": "shared"}
    paused = copy.deepcopy(shared)
    paused["spec"]["paused"] = True
    assert _reconcile(paused, memo).status["phase"] == "Paused"
    assert pool.flows == {}

    _reconcile(shared, memo)
    assert 42 in pool.flows
    dedicated = copy.deepcopy(shared)
    dedicated["spec"]["runnerMode"] = "dedicated"
    patch = _reconcile(dedicated, memo)
    assert pool.flows == {}
    assert sorted(kind for kind, _, _ in kube.objects) == ["ConfigMap", "Deployment", "Service"]
    assert patch.status["runnerMode"] == "dedicated"


def test_a_deleted_shared_konnect_leaves_the_pool_on_its_deleted_event(konnect, memo, settings):
    """Without a finalizer Kopf never calls the optional delete handler: the DELETED event does it."""
    pool = FakePool()
    memo["config"] = settings.model_copy(update={"runner_pool_service": "konnectz-runner-pool"})
    memo["pool"] = pool
    shared = konnect(runnerMode="shared")
    _reconcile(shared, memo)
    assert 42 in pool.flows
    body = kopf.Body(shared)
    handlers.konnect_gone(event={"type": "MODIFIED", "object": shared}, body=body, memo=memo, logger=log)
    assert 42 in pool.flows
    handlers.konnect_gone(event={"type": "DELETED", "object": shared}, body=body, memo=memo, logger=log)
    assert pool.flows == {}


def test_a_konnect_applied_without_ids_waits_for_the_api_to_import_it(konnect, memo, kube):
    applied = konnect()
    del applied["spec"]["konnectId"], applied["spec"]["ownerId"]
    patch = _reconcile(applied, memo)
    assert kube.objects == {}
    assert patch.status["phase"] == "Pending"
    assert "konnectz.io/owner" in patch.status["message"]


def test_the_pool_sweep_skips_a_konnect_the_api_has_not_imported(konnect, settings):
    """A shared Konnect applied with kubectl has no konnectId until the api imports it (or ever, if
    its owner is unknown): the sweep that withdraws the flows of deleted Konnects goes on."""
    imported, applied, paused = konnect(), konnect(), konnect()
    for item in (imported, applied, paused):
        item["spec"]["runnerMode"] = "shared"
    del applied["spec"]["konnectId"], applied["spec"]["ownerId"]
    paused["spec"].update(konnectId=43, paused=True)

    class Listing:
        def request(self, method: str, path: str, **_: Any) -> dict[str, Any]:
            return {"items": [imported, applied, paused]}

    assert handlers._pool_konnect_ids(Listing(), settings) == {42}  # type: ignore[arg-type]


def test_a_webhook_konnect_waits_for_its_token_secret(konnect, memo, kube):
    kube.secrets.clear()
    with pytest.raises(kopf.TemporaryError, match="konnect-42-trigger"):
        _reconcile(konnect(), memo)
    assert kube.objects == {}
    [(_, name, status)] = kube.status_patches
    assert (name, status["phase"]) == ("konnect-42", "Pending")


def test_a_konnect_naming_its_own_image_is_refused_and_changes_no_child(konnect, memo, kube):
    """spec.image may only name an image of the administrator's allow list: another Konnect author's
    image would run holding the konnect's broker token."""
    with pytest.raises(kopf.PermanentError, match=r"image evil\.example\.com/miner:1 is not allowed"):
        patch = kopf.Patch()
        handlers.reconcile(kopf.Body(konnect(image="evil.example.com/miner:1")), patch, memo, log)
    assert kube.objects == {}  # no Deployment, ConfigMap or Secret
    assert patch["status"]["phase"] == "Failed"
    assert "KONNECTZ_RUNNER_IMAGES" in patch["status"]["message"]

    # A flow already running keeps running through a refused edit: its children stay as they were.
    _reconcile(konnect(), memo)
    before = copy.deepcopy(kube.objects)
    with pytest.raises(kopf.PermanentError, match="is not allowed"):
        _reconcile(konnect(image="evil.example.com/miner:1"), memo)
    assert kube.objects == before
    # Drift repair renders nothing for it either.
    deployment = kube.objects[("Deployment", "team-a", "kz-konnect-42")]
    kube.objects[("Konnect", "team-a", "konnect-42")] = konnect(image="evil.example.com/miner:1")
    assert handlers.repair_child(deployment, deleted=True, kube=kube, config=memo["config"]) is None


def test_an_image_on_the_allow_list_runs(konnect, memo, kube, settings):
    memo["config"] = settings.model_copy(
        update={"runner_images": "registry.example.com/konnectz-runner:1.3.0, other:2"}
    )
    patch = _reconcile(konnect(image="registry.example.com/konnectz-runner:1.3.0"), memo)
    assert patch["status"]["phase"] == "Ready"
    deployment = kube.objects[("Deployment", "team-a", "kz-konnect-42")]
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.example.com/konnectz-runner:1.3.0"
    # The operator's own runner image is always allowed.
    assert _reconcile(konnect(image=settings.runner_image), memo)["status"]["phase"] == "Ready"


def test_with_a_credentials_key_only_a_konnect_the_api_bound_to_its_flow_runs(konnect, memo, kube, settings):
    """spec.konnectId is readable by anyone who may list Konnects: a copy naming another flow's id
    (with that flow's binding annotation copied, even) gets no runner, no token Secret and no place in
    the shared pool; the Konnect the api bound runs."""
    from konnectz_contracts.broker_token import resource_binding
    from konnectz_contracts.resource import BINDING_ANNOTATION

    key = "k" * 40
    pool = FakePool()
    memo["config"] = settings.model_copy(update={"credentials_key": key, "runner_pool_service": "pool"})
    memo["pool"] = pool
    bound = konnect()
    uid = bound["metadata"]["uid"]
    bound["metadata"]["annotations"] = {BINDING_ANNOTATION: resource_binding(key, 42, uid)}

    for copy_ in (konnect(name="copy"), konnect(name="copy", runnerMode="shared")):
        copy_["metadata"]["uid"] = "uid-of-the-copy"
        copy_["metadata"]["annotations"] = dict(bound["metadata"]["annotations"])  # copied: another uid
        own = {"metadata": {"ownerReferences": [{"kind": "Konnect", "uid": "uid-of-the-copy"}]}}
        kube.secrets[("team-a", "copy-trigger")] = {**kube.secrets[("team-a", "konnect-42-trigger")], **own}
        patch = _reconcile(copy_, memo)
        assert patch.status["phase"] == "Pending" and "waiting for the api to bind" in patch.status["message"]
        assert kube.objects == {} and pool.flows == {}

    patch = _reconcile(bound, memo)
    assert patch.status["phase"] == "Ready"
    assert sorted(kind for kind, _, _ in kube.objects) == ["ConfigMap", "Deployment", "Secret", "Service"]
    # A refusal the api wrote (Failed, claimed by another resource) is not overwritten with Pending.
    refused = konnect(name="copy")
    refused["metadata"]["uid"] = "uid-of-the-copy"
    refused["status"] = {"phase": "Failed", "message": "konnectId 42 is claimed by another resource"}
    assert "phase" not in (_reconcile(refused, memo).get("status") or {})


def test_a_konnect_naming_another_konnects_token_secret_never_gets_that_token(konnect, memo, kube, token):
    """spec.trigger.tokenSecret is the author's to write: the operator uses only a Secret owned by the
    Konnect itself (as the api writes it), so a flow is never pointed at another flow's URL token."""
    thief = konnect(name="thief", trigger={"kind": "webhook", "tokenSecret": "konnect-42-trigger"})
    thief["metadata"]["uid"] = "uid-of-the-thief"
    with pytest.raises(kopf.TemporaryError, match="owned by this Konnect"):
        _reconcile(thief, memo)
    assert kube.objects == {}
    assert kube.status_patches[-1][2]["phase"] == "Pending"
    assert token not in json.dumps(kube.status_patches)
