"""Publishing hands a compiled FlowSpec to a deployer.

- ``LocalDeployer`` puts it into the ``KZ_KONNECTS`` JetStream KV bucket; local runners watch
  the bucket and serve the konnect without a restart.
- ``KubernetesDeployer`` creates or patches the ``Konnect`` custom resource; the operator turns
  it into runner workloads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import Any, Literal, Protocol

from konnectz_api.bus import Bus
from konnectz_contracts.broker_token import resource_binding
from konnectz_contracts.events import KV_KONNECTS, TaskEvent, konnect_key
from konnectz_contracts.resource import (
    BINDING_ANNOTATION,
    GROUP,
    KONNECT_ID_LABEL,
    LAST_RUN_ANNOTATION,
    OWNER_LABEL,
    PLURAL,
    VERSION,
    konnect_name,
    konnect_resource,
    last_run_annotation,
    token_secret,
)
from konnectz_contracts.spec import FlowSpec

__all__ = [
    "Claim",
    "DeployConflict",
    "DeployError",
    "Deployer",
    "KubernetesDeployer",
    "LocalDeployer",
    "konnect_resource",
]


log = logging.getLogger(__name__)


class DeployError(RuntimeError):
    pass


class DeployConflict(DeployError):
    """The Konnect was changed in the cluster (kubectl, a GitOps tool) in a field the publish would
    overwrite: the api never forces its write over another field manager."""


@dataclass
class Claim:
    """Which Konnect resource a flow follows (``konnects.resource_uid``), read under the flow's claim
    lock (:meth:`konnectz_api.services.cluster_sync.ClusterSync.claim`); ``uid`` set by the holder is
    recorded when the lock is released."""

    recorded: str | None = None  # the UID recorded now (None: no resource recorded yet)
    legacy: bool = False  # a Published flow from before UIDs were recorded: its resource is adopted
    uid: str | None = None  # to record

    def accepts(self, uid: str) -> bool:
        """Whether the existing resource ``uid`` is the flow's."""
        return uid == self.recorded or (self.recorded is None and self.legacy)


class Binder(Protocol):
    """Where the flow's recorded resource is kept (the cluster sync: ``konnects.resource_uid``)."""

    def binding(self, konnect_id: int) -> Claim:
        """The flow's claim as it is now (no lock)."""
        ...

    def claim(self, konnect_id: int) -> contextlib.AbstractContextManager[Claim]:
        """The flow's claim under its lock; ``Claim.uid`` is recorded when the block ends."""
        ...


@contextlib.contextmanager
def _unbound(konnect_id: int) -> Iterator[Claim]:
    yield Claim(legacy=True)  # without a database (unit tests of the deployer alone): no binding


class Deployer(Protocol):
    async def publish(self, spec: FlowSpec, *, owner_email: str | None = None) -> None: ...

    async def unpublish(self, konnect_id: int) -> None: ...

    async def record_run(
        self, event: TaskEvent, *, runs_today: int | None = None, failures_today: int | None = None
    ) -> None:
        """Tell whoever runs the konnect how its latest run ended (``kubectl get konnects``)."""
        ...

    def phases(self, owner_id: int, konnect_ids: list[int]) -> dict[int, str]:
        """The runtime phase of each published konnect where the deployer knows one."""
        ...


class LocalDeployer:
    def __init__(self, bus: Bus) -> None:
        self.bus = bus

    async def publish(self, spec: FlowSpec, *, owner_email: str | None = None) -> None:
        try:
            kv = await self.bus.js.key_value(KV_KONNECTS)
            await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
        except Exception as exc:
            raise DeployError(f"could not hand the konnect to the runners: {exc}") from exc

    async def unpublish(self, konnect_id: int) -> None:
        try:
            kv = await self.bus.js.key_value(KV_KONNECTS)
            await kv.delete(konnect_key(konnect_id))
        except Exception as exc:
            raise DeployError(f"could not withdraw the konnect from the runners: {exc}") from exc

    async def record_run(
        self, event: TaskEvent, *, runs_today: int | None = None, failures_today: int | None = None
    ) -> None:
        return None  # the task log is the record; local runners have no resource to annotate

    def phases(self, owner_id: int, konnect_ids: list[int]) -> dict[int, str]:
        return {}  # local runners pick a published konnect up at once: there is no phase to show


FIELD_MANAGER = "konnectz-api"


def _refusal(action: str, exc: Exception) -> DeployError:
    """A DeployError whose message says what Kubernetes answered, never a stack trace."""
    from kubernetes.client.exceptions import ApiException  # optional: the Kubernetes deployer's

    if isinstance(exc, ApiException):
        detail = exc.reason or ""
        try:
            detail = json.loads(exc.body or "{}").get("message") or detail
        except (TypeError, ValueError):
            pass
        if exc.status == 409 and "conflict" in detail.lower():
            return DeployConflict(
                "the flow was changed in the cluster (kubectl or a GitOps tool) in a way this version would "
                f"overwrite: {detail}. To publish it, make it agree with the cluster's version (kubectl get "
                "konnect shows it), or undo the change there."
            )
        return DeployError(f"Kubernetes refused to {action} ({exc.status}): {detail}")
    return DeployError(f"Kubernetes could not be reached to {action}: {type(exc).__name__}")


class KubernetesDeployer:
    """Writes ``Konnect`` resources with server-side apply (field manager ``konnectz-api``), never
    forced: a field another manager (kubectl, a GitOps tool) set to another value is a
    :class:`DeployConflict`, not overwritten. The URL token goes to a Secret owned by the Konnect.

    Every failure, an API error or an unreachable API server, is a :class:`DeployError`, which the
    routes answer with 503 and a message; the draft is kept either way. Credentials never go into
    the resource: the flow spec carries references only, runners fetch secrets at run time.
    """

    def __init__(
        self,
        namespace: str,
        api_client: Any = None,
        *,
        runner_mode: Literal["dedicated", "shared"] = "dedicated",
        binding_key: str = "",
    ) -> None:
        from kubernetes import client, config  # optional: the Kubernetes deployer's

        self.runner_mode: Literal["dedicated", "shared"] = runner_mode
        self.binding_key = binding_key
        if api_client is None:
            try:
                config.load_incluster_config()
            except config.ConfigException:
                config.load_kube_config()
        self._api = client.CustomObjectsApi(api_client)
        self._core = client.CoreV1Api(api_client)
        self.namespace = namespace
        # The resource name of each flow's Konnect: konnect-<id> when the api created it, the name it
        # was applied under when it came from kubectl. The cluster sync keeps it current (it sees
        # every Konnect); a flow not in it is looked up by its KONNECT_ID_LABEL.
        self._names: dict[int, str] = {}

    # The flows' recorded resources (konnects.resource_uid): the cluster sync binds itself here.
    binder: Binder | None = None
    # The credentials key (the operator's): the binding annotation is an HMAC under it. Empty: none.
    binding_key: str = ""

    def bind(self, name: str, konnect_id: int, uid: str, annotations: dict[str, Any] | None) -> None:
        """Write the binding annotation on the flow's recorded Konnect ``name`` (uid ``uid``) unless it
        has it: the operator runs only Konnects the api bound to their flow (docs/security.md)."""
        if not self.binding_key or not uid:
            return
        proof = resource_binding(self.binding_key, konnect_id, uid)
        if (annotations or {}).get(BINDING_ANNOTATION) == proof:
            return
        # A merge patch of this one annotation, guarded by the uid: it never lands on a successor.
        patch = {"metadata": {"uid": uid, "annotations": {BINDING_ANNOTATION: proof}}}
        try:
            self._api.patch_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, name, patch,
                field_manager=FIELD_MANAGER, _content_type="application/merge-patch+json", _request_timeout=15,
            )  # fmt: skip
        except Exception as exc:
            raise _refusal("bind the konnect to its flow", exc) from exc

    def _claim(self, konnect_id: int) -> contextlib.AbstractContextManager[Claim]:
        return self.binder.claim(konnect_id) if self.binder is not None else _unbound(konnect_id)

    def remember(self, konnect_id: int, name: str) -> None:
        self._names[int(konnect_id)] = name

    def forget(self, konnect_id: int, name: str) -> None:
        if self._names.get(int(konnect_id)) == name:
            del self._names[int(konnect_id)]

    def resource_name(self, konnect_id: int, claim: Claim | None = None) -> str:
        """The name of the flow's Konnect (blocking: may ask the API server once).

        Looked up by its id label, which anyone who may write Konnects can set: only the resource
        recorded for the flow counts (``claim``, default: the binder's). A flow with no resource
        recorded gets ``konnect-<id>``."""
        konnect_id = int(konnect_id)
        known = self._names.get(konnect_id)
        if known is not None:
            return known
        if claim is None:
            claim = self.binder.binding(konnect_id) if self.binder is not None else Claim(legacy=True)
        if claim.recorded is None and not claim.legacy:
            return konnect_name(konnect_id)
        found = self._api.list_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, label_selector=f"{KONNECT_ID_LABEL}={konnect_id}",
            _request_timeout=15,
        )  # fmt: skip
        for item in found.get("items", []) if isinstance(found, dict) else []:
            if not claim.accepts(str((item.get("metadata") or {}).get("uid") or "")):
                continue
            if (item.get("spec") or {}).get("konnectId") == konnect_id:
                name = str(item["metadata"]["name"])
                self.remember(konnect_id, name)
                return name
        return konnect_name(konnect_id)

    def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply of (part of) a Konnect, not forced; the object as stored."""
        return self._apply(body)[0]

    def _apply(self, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """:meth:`apply`, and whether it created the Konnect (201) rather than changed one."""
        name = body["metadata"]["name"]
        created = False
        try:
            stored = self._api.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                self.namespace,
                PLURAL,
                name,
                body,
                field_manager=FIELD_MANAGER,
                _content_type="application/apply-patch+yaml",
                _request_timeout=15,
            )
            if not isinstance(stored, dict):
                # The client maps only 200 to a body: an apply that creates (201) answers None, and
                # the token Secret needs the new Konnect's uid to be owned by it.
                created = True
                stored = self._api.get_namespaced_custom_object(
                    GROUP, VERSION, self.namespace, PLURAL, name, _request_timeout=15
                )
        except Exception as exc:
            raise _refusal("publish the konnect", exc) from exc
        return (stored if isinstance(stored, dict) else {}), created

    def apply_token(self, name: str, token: str, owner_uid: str) -> None:
        """The Secret of the Konnect's URL token (the api's own object: forced)."""
        body = token_secret(name, self.namespace, token, owner_uid=owner_uid)
        try:
            self._core.patch_namespaced_secret(
                body["metadata"]["name"],
                self.namespace,
                body,
                field_manager=FIELD_MANAGER,
                force=True,
                _content_type="application/apply-patch+yaml",
                _request_timeout=15,
            )
        except Exception as exc:
            raise _refusal("store the webhook token", exc) from exc

    def _publish(self, spec: FlowSpec, owner_email: str | None) -> None:
        """Apply the flow's Konnect under its claim lock: the resource it creates is recorded as the
        flow's (before the cluster sync, which waits for the lock, can refuse it as another's); an
        existing resource must be the recorded one (a Konnect someone else created under the name
        the api would use is not taken over)."""
        with self._claim(spec.konnect_id) as claim:
            try:
                name = self.resource_name(spec.konnect_id, claim)
            except Exception as exc:
                raise _refusal("publish the konnect", exc) from exc
            body = konnect_resource(
                spec, self.namespace, runner_mode=self.runner_mode, owner_email=owner_email, name=name
            )
            stored, created = self._apply(body)
            uid = str((stored.get("metadata") or {}).get("uid") or "")
            if not created and not claim.accepts(uid):
                raise DeployError(
                    f"the Konnect {name} in the cluster is not this flow's resource (it was created by someone "
                    "else, not by the api): delete it or rename it, then publish again"
                )
            claim.uid = uid or None
            self.remember(spec.konnect_id, name)
        self.bind(name, spec.konnect_id, uid, (stored.get("metadata") or {}).get("annotations"))
        token = getattr(spec.trigger, "token", None)
        if token:
            self.apply_token(body["metadata"]["name"], token, uid)

    async def publish(self, spec: FlowSpec, *, owner_email: str | None = None) -> None:
        await asyncio.to_thread(self._publish, spec, owner_email)

    async def unpublish(self, konnect_id: int) -> None:
        from kubernetes.client.exceptions import ApiException  # optional: the Kubernetes deployer's

        def _delete() -> None:
            try:
                self._api.delete_namespaced_custom_object(
                    GROUP, VERSION, self.namespace, PLURAL, self.resource_name(konnect_id), _request_timeout=15
                )
            except ApiException as exc:
                if exc.status != 404:
                    raise _refusal("delete the konnect", exc) from exc
            except Exception as exc:
                raise _refusal("delete the konnect", exc) from exc

        await asyncio.to_thread(_delete)

    async def record_run(
        self, event: TaskEvent, *, runs_today: int | None = None, failures_today: int | None = None
    ) -> None:
        """The run's outcome and today's counts, in the Konnect's :data:`LAST_RUN_ANNOTATION`: the
        operator, the one writer of the status, copies them into it (``kubectl get konnects`` shows them)."""
        from kubernetes.client.exceptions import ApiException  # optional: the Kubernetes deployer's

        status: dict[str, Any] = {
            "lastRunTime": event.finished_at.isoformat(),
            "lastRunStatus": event.status,
            "lastRunId": event.run_id,
        }
        if runs_today is not None:
            status.update(
                runsDay=event.finished_at.astimezone(UTC).date().isoformat(),
                runsToday=runs_today,
                failuresToday=failures_today or 0,
            )
        patch = {"metadata": {"annotations": {LAST_RUN_ANNOTATION: last_run_annotation(status)}}}

        def _patch() -> None:
            try:
                name = self.resource_name(event.konnect_id)
                self._api.patch_namespaced_custom_object(
                    GROUP, VERSION, self.namespace, PLURAL, name, patch, _request_timeout=15
                )
            except ApiException as exc:
                if exc.status != 404:  # unpublished meanwhile: nothing to annotate
                    raise _refusal("record the run", exc) from exc
            except Exception as exc:
                raise _refusal("record the run", exc) from exc

        await asyncio.to_thread(_patch)

    def phases(self, owner_id: int, konnect_ids: list[int]) -> dict[int, str]:
        """``status.phase`` of the owner's Konnects among ``konnect_ids`` (one LIST by owner label).

        The flow list shows it; when the API server cannot be asked, the list is shown without it.
        """
        wanted = set(konnect_ids)
        if not wanted:
            return {}
        try:
            found = self._api.list_namespaced_custom_object(
                GROUP,
                VERSION,
                self.namespace,
                PLURAL,
                label_selector=f"{OWNER_LABEL}={int(owner_id)}",
                _request_timeout=5,
            )
        except Exception as exc:
            log.warning("could not read Konnect phases: %s", _refusal("list konnects", exc))
            return {}
        phases: dict[int, str] = {}
        items = found.get("items", []) if isinstance(found, dict) else []
        for item in items:
            konnect_id = (item.get("spec") or {}).get("konnectId")
            phase = (item.get("status") or {}).get("phase")
            if konnect_id in wanted and isinstance(phase, str):
                phases[int(konnect_id)] = phase
        return phases
