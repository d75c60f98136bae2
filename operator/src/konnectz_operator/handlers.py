"""Kopf handlers: thin glue between Konnect events, the renders and the API.

Run with ``python -m konnectz_operator`` or ``kopf run --standalone -m konnectz_operator.handlers``.
Handlers are synchronous (Kopf runs them in a thread pool), as the operator's Kubernetes client is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, cast

import kopf

from konnectz_contracts.nats_auth import connect_options
from konnectz_contracts.resource import (
    API_VERSION,
    GROUP,
    LAST_RUN_ANNOTATION,
    PLURAL,
    VERSION,
    last_run_status,
    refused_status,
)

from .apply import WORKERS, Kube, KubeError, apply, login, path_of, prune
from .config import OperatorSettings
from .drift import drifted, owner_konnect
from .errors import InvalidKonnect, UnsupportedKonnect, to_kopf_error
from .pool import PoolError, RunnerPool, is_shared
from .render import (
    binding_problem,
    child_name,
    form_url,
    image_problem,
    pool_flow_json,
    render_children,
    webhook_url,
)
from .resolve import NotImported, Resolved, TokenMissing, resolve
from .status import Phase, now_rfc3339, set_condition
from .validation import validate_konnect

log = logging.getLogger(__name__)


@kopf.on.login()
def kube_login(**_: Any) -> kopf.ConnectionInfo:
    """Kopf connects with the same credentials as the operator's own client (read at login time)."""
    return login()


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, memo: Any, logger: kopf.Logger, **_: Any) -> None:
    config = memo.get("config") or OperatorSettings()
    # A watch stream that silently stops delivering events is Kopf's best-known failure:
    # ask the server to end each watch, and give up on the client side a bit later.
    settings.watching.server_timeout = config.watch_server_timeout
    settings.watching.client_timeout = config.watch_client_timeout
    settings.watching.connect_timeout = config.watch_connect_timeout
    # A standby replica takes over when the active one's peering record is this old.
    settings.peering.lifetime = config.peering_lifetime
    settings.peering.stealth = True  # no log line per keep-alive
    # Kopf turns every log line of a handler into a Kubernetes Event on the object, including
    # "Handler 'drift-deployments' succeeded" on each child event: thousands of POSTs (and open
    # connections) at 500 Konnects. The Events people read are posted explicitly (Reconciled,
    # Paused, DriftRepaired, ApplyFailed); log lines become Events only from WARNING up.
    settings.posting.level = logging.WARNING
    settings.execution.max_workers = WORKERS
    # Kopf starts one asyncio worker per object with pending events, without a bound: at 500
    # Konnects (2,000+ children) that is thousands of tasks, each with its own API connection
    # and TLS buffers, while only WORKERS handlers can run at a time. A bound keeps the memory flat
    # (make bench) at the same speed; idle workers go after a second instead of five.
    settings.queueing.worker_limit = 4 * WORKERS
    settings.queueing.idle_timeout = 1.0
    settings.posting.worker_limit = WORKERS
    # The api records each run in an annotation (LAST_RUN_ANNOTATION), copied into the status by
    # konnect_run_recorded: not a change to reconcile (no render, no apply per run).
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        ignored_fields=[("metadata", "annotations", LAST_RUN_ANNOTATION)]
    )
    memo["config"] = config
    if memo.get("kube") is None:
        memo["kube"] = Kube()
    logger.info("konnectz operator configured: runner image %s", config.runner_image)


def _event(body: kopf.Body, type_: str, *, reason: str, message: str) -> None:
    """A Kubernetes Event on the Konnect (``kubectl describe konnect`` shows it).

    Kopf posts events in the background from its own context; outside it (unit tests calling the
    handlers directly) there is nowhere to post, and nothing is lost but the event.
    """
    try:
        kopf.event(body, type=type_, reason=reason, message=message[:1024])
    except LookupError:
        pass


def _write_status(
    patch: kopf.Patch,
    body: kopf.Body,
    *,
    phase: Phase,
    ready: bool,
    reason: str,
    message: str,
) -> None:
    generation = body.meta.get("generation")
    previous = (body.get("status") or {}).get("conditions")
    patch.status["phase"] = phase
    patch.status["message"] = message
    patch.status["observedGeneration"] = generation
    patch.status["conditions"] = set_condition(
        previous,
        type_="Ready",
        status="True" if ready else "False",
        reason=reason,
        message=message,
        generation=generation,
        now=now_rfc3339(),
    )


def entrypoint(body: kopf.Body, url: str | None) -> str | None:
    """What `kubectl get konnects` shows in ENTRYPOINT: the webhook or form URL, or the schedule and its zone."""
    trigger = body.spec.get("trigger") or {}
    if trigger.get("kind") == "schedule" and trigger.get("schedule"):
        return f"{trigger['schedule']} ({trigger.get('timezone') or 'UTC'})"
    return url


def live_revision(body: kopf.Body) -> int | None:
    """The revision of the flow now served (``spec.flow.revision``; None for a flow published without
    one, e.g. applied with kubectl): ``status.revision``."""
    revision = (body.spec.get("flow") or {}).get("revision")
    return revision if isinstance(revision, int) and not isinstance(revision, bool) and revision >= 1 else None


def mark_pending(body: kopf.Body, kube: Kube, message: str) -> None:
    """Status Pending with ``message`` at once (not at the end of the handler), unless it says so already."""
    status = body.get("status") or {}
    if status.get("phase") == "Pending" and status.get("message") == message:
        return
    namespace = body.metadata.namespace or "default"
    try:
        status = {"phase": "Pending", "message": message}
        kube.patch_status(API_VERSION, "Konnect", namespace, body.metadata.name or "", status)
    except KubeError as exc:
        if exc.status != 404:
            raise


def reconcile(body: kopf.Body, patch: kopf.Patch, memo: kopf.Memo, logger: kopf.Logger) -> None:
    """Render the children of a Konnect, apply them, prune the ones it no longer has, report status."""
    config: OperatorSettings = memo["config"]
    kube: Kube = memo["kube"]
    try:
        resolved: Resolved = resolve(kube, body)
    except NotImported as exc:
        # Not the operator's to decide: the api imports it (or says in status why it cannot).
        if not (body.get("status") or {}).get("phase"):
            patch.status["phase"] = "Pending"
            patch.status["message"] = str(exc)
        logger.info("Konnect not imported yet: %s", exc)
        return
    except TokenMissing as exc:
        mark_pending(body, kube, str(exc))
        raise kopf.TemporaryError(str(exc), delay=2.0) from exc
    except KubeError as exc:
        raise to_kopf_error(exc) from exc
    konnect = kopf.Body(cast(kopf.RawBody, resolved.konnect))
    unbound = binding_problem(konnect, config)
    if unbound:
        # Not the operator's to decide either: the api binds the resource it follows (and says in the
        # status of any other naming the same flow that it is refused). Nothing is rendered or changed.
        if (body.get("status") or {}).get("phase") != "Failed":
            patch.status["phase"] = "Pending"
            patch.status["message"] = unbound
        logger.info("Konnect not bound to its flow: %s", unbound)
        return
    try:
        validate_konnect(konnect, resolved.token)
        # Before anything is rendered: a refused image changes no child (a running flow keeps running).
        refused_image = image_problem(konnect, config)
        if refused_image:
            raise InvalidKonnect(refused_image)
        if is_shared(konnect.spec) and (not config.runner_pool_service or memo.get("pool") is None):
            raise UnsupportedKonnect(
                "runnerMode shared needs the shared runner pool, which this installation does not run "
                "(chart value runnerPool.enabled; operator setting KONNECTZ_RUNNER_POOL_SERVICE)"
            )
    except InvalidKonnect as exc:
        _write_status(patch, body, phase="Failed", ready=False, reason=type(exc).__name__, message=str(exc))
        _event(body, "Warning", reason=type(exc).__name__, message=str(exc))
        raise kopf.PermanentError(str(exc)) from exc

    children = render_children(konnect, config, resolved.token)
    kopf.adopt(children, owner=body)
    rendered: dict[tuple[str, str, str], Mapping[str, Any]] = memo.setdefault("rendered", {})
    try:
        actions = [f"{obj['kind']} {apply(kube, obj)}" for obj in children]
        for obj in children:
            rendered[_child_key(obj)] = obj
        pruned = prune(
            kube,
            body.metadata.namespace or "default",
            child_name(body.metadata.name or ""),
            children,
            owner_uid=body.metadata.uid or "",
        )
        actions += _hand_over(body, memo, resolved)
    except (KubeError, PoolError) as exc:
        error = to_kopf_error(exc) if isinstance(exc, KubeError) else kopf.TemporaryError(str(exc), delay=10.0)
        permanent = isinstance(error, kopf.PermanentError)
        current = (body.get("status") or {}).get("phase")
        _write_status(
            patch,
            body,
            phase="Failed" if permanent else (current or "Pending"),
            ready=False,
            reason="ApplyFailed",
            message=str(error),
        )
        _event(body, "Warning", reason="ApplyFailed", message=str(error))
        raise error from exc

    paused = bool(body.spec.get("paused", False))
    summary = ", ".join(actions + [f"{item} deleted" for item in pruned])
    _event(body, "Normal", reason="Paused" if paused else "Reconciled", message=summary)
    _write_status(
        patch,
        body,
        phase="Paused" if paused else "Ready",
        ready=not paused,
        reason="Paused" if paused else "Reconciled",
        message=("paused: " if paused else "") + summary,
    )
    # None removes the key (merge patch) when the trigger is no longer a webhook.
    patch.status["runnerMode"] = body.spec.get("runnerMode", "dedicated")
    url = webhook_url(konnect, config)
    patch.status["webhookUrl"] = url
    patch.status["entrypoint"] = entrypoint(konnect, url or form_url(konnect, config))
    patch.status["revision"] = live_revision(konnect)
    logger.info("Konnect reconciled: %s", summary)


def _hand_over(body: kopf.Body, memo: kopf.Memo, resolved: Resolved) -> list[str]:
    """Give a pool Konnect's flow to the shared runner pool, or take it back (paused, or no longer
    shared); what was done, for the Event."""
    pool: RunnerPool | None = memo.get("pool")
    konnect_id = body.spec.get("konnectId")
    was_shared = (body.get("status") or {}).get("runnerMode") == "shared"
    if pool is None or konnect_id is None or not (is_shared(body.spec) or was_shared):
        return []
    try:
        if is_shared(body.spec) and not body.spec.get("paused", False):
            changed = pool.call(pool.publish(int(konnect_id), pool_flow_json(resolved.konnect, resolved.token)))
            return ["flow handed to the shared runner pool" if changed else "flow in the shared runner pool"]
        if pool.call(pool.withdraw(int(konnect_id))):
            return ["flow withdrawn from the shared runner pool"]
        return []
    except Exception as exc:  # NATS unreachable, timeouts: retried by Kopf
        raise PoolError(f"the shared runner pool (NATS) could not be reached: {exc or type(exc).__name__}") from exc


def _leave_pool(body: kopf.Body, memo: kopf.Memo, logger: kopf.Logger | logging.Logger) -> None:
    pool: RunnerPool | None = memo.get("pool")
    spec = body.get("spec") or {}
    konnect_id = spec.get("konnectId")
    if (
        pool is not None
        and konnect_id is not None
        and (is_shared(spec) or (body.get("status") or {}).get("runnerMode") == "shared")
    ):
        try:
            if pool.call(pool.withdraw(int(konnect_id))):
                logger.info("Konnect deleted: flow %s withdrawn from the shared runner pool", konnect_id)
        except Exception as exc:
            logger.warning("Could not withdraw konnect %s from the shared runner pool yet: %s", konnect_id, exc)


@kopf.on.delete(GROUP, VERSION, PLURAL, optional=True)
def konnect_deleted(body: kopf.Body, memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    """Children go with their owner (garbage collection); a pool Konnect's flow leaves the pool.

    ``optional``: no finalizer, so a Konnect is never stuck when the operator is away. Kopf calls
    this only while something else's finalizer holds the Konnect; a Konnect without finalizers is
    gone at once and :func:`konnect_gone` sees its DELETED event. What both miss (the operator was
    away), the sweep of :func:`start_pool` finds.
    """
    _leave_pool(body, memo, logger)


@kopf.on.event(GROUP, VERSION, PLURAL)
def konnect_gone(event: kopf.RawEvent, body: kopf.Body, memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    """The DELETED watch event of a Konnect: its flow leaves the shared pool at once (no finalizer
    needed; only the active peer handles events)."""
    if event.get("type") == "DELETED":
        _leave_pool(body, memo, logger)


@kopf.on.event(GROUP, VERSION, PLURAL)
def konnect_run_recorded(event: kopf.RawEvent, body: kopf.Body, memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    """Copy what the api said on the Konnect into its status: the run it recorded (LAST_RUN_ANNOTATION)
    and, when it refuses the Konnect, why (REFUSED_ANNOTATION: phase Failed and the message). The
    operator is the one writer of a Konnect's status; the api writes spec, labels and annotations."""
    if event.get("type") == "DELETED":
        return
    fields = {**last_run_status(body.metadata.annotations), **refused_status(body.metadata.annotations)}
    status = body.get("status") or {}
    if not fields or all(status.get(key) == value for key, value in fields.items()):
        return
    kube: Kube = memo["kube"]
    namespace, name = body.metadata.namespace or "default", body.metadata.name or ""
    try:
        kube.patch_status(API_VERSION, "Konnect", namespace, name, fields)
    except KubeError as exc:
        if exc.status != 404:
            raise
        return
    logger.debug("Konnect %s/%s: the api's %s copied into its status", namespace, name, sorted(fields))


@kopf.on.startup()
async def start_pool(memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    """Connect the shared runner pool (lazily, on first use) and sweep it now and then."""
    config: OperatorSettings = memo.get("config") or OperatorSettings()
    if not config.runner_pool_service or memo.get("pool") is not None:
        return
    pool = RunnerPool(
        config.nats_url,
        connect_options(config.nats_user, config.nats_password, config.nats_ca_file),
        replicas=config.nats_replicas,
    )
    pool.bind(asyncio.get_running_loop())
    memo["pool"] = pool
    memo["pool_sweeper"] = asyncio.create_task(_sweep_forever(pool, memo, config), name="konnectz-pool-sweep")
    logger.info("Shared runner pool: Service %s, NATS %s", config.runner_pool_service, config.nats_url)


async def _sweep_forever(pool: RunnerPool, memo: kopf.Memo, config: OperatorSettings) -> None:
    failing = False
    while True:
        await asyncio.sleep(config.runner_pool_sweep_seconds)
        try:
            kube: Kube = memo["kube"]
            wanted = await asyncio.to_thread(_pool_konnect_ids, kube, config)
            stale = await pool.sweep(wanted)
            if stale:
                log.info("Shared runner pool: withdrew flows of deleted Konnects %s", stale)
            if failing:
                log.info("Shared runner pool: sweeping again")
            failing = False
        except Exception as exc:
            if not failing:
                log.warning("Shared runner pool: sweep failed (%s); trying again", exc or type(exc).__name__)
            failing = True


def _pool_konnect_ids(kube: Kube, config: OperatorSettings) -> set[int]:
    """konnectId of every Konnect that should be in the pool now (shared, not paused, not being deleted)."""
    namespaces = [ns.strip() for ns in config.namespace.split(",") if ns.strip()]
    paths = [path_of(API_VERSION, "Konnect", ns) for ns in namespaces] or [f"/apis/{API_VERSION}/{PLURAL}"]
    wanted: set[int] = set()
    for path in paths:
        for item in kube.request("GET", path).get("items") or []:
            spec = item.get("spec") or {}
            if spec.get("konnectId") is None:  # applied with kubectl, not imported (yet): nothing in the pool
                continue
            if is_shared(spec) and not spec.get("paused") and not (item.get("metadata") or {}).get("deletionTimestamp"):
                wanted.add(int(spec["konnectId"]))
    return wanted


@kopf.on.cleanup()
async def stop_pool(memo: kopf.Memo, **_: Any) -> None:
    sweeper = memo.get("pool_sweeper")
    if sweeper is not None:
        sweeper.cancel()
    pool: RunnerPool | None = memo.get("pool")
    if pool is not None:
        await pool.close()


@kopf.on.create(GROUP, VERSION, PLURAL)
def konnect_created(body: kopf.Body, patch: kopf.Patch, memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    reconcile(body, patch, memo, logger)


@kopf.on.update(GROUP, VERSION, PLURAL)
def konnect_updated(body: kopf.Body, patch: kopf.Patch, memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    reconcile(body, patch, memo, logger)


@kopf.on.resume(GROUP, VERSION, PLURAL)
def konnect_resumed(body: kopf.Body, patch: kopf.Patch, memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    reconcile(body, patch, memo, logger)


@kopf.on.event("batch", "v1", "cronjobs", labels={"app.kubernetes.io/managed-by": "konnectz-operator"})
def cronjob_scheduled(event: kopf.RawEvent, body: kopf.Body, memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    """Copy a schedule konnect's CronJob lastScheduleTime into the Konnect's status."""
    if event.get("type") == "DELETED":
        return
    last = (body.get("status") or {}).get("lastScheduleTime")
    owner = next((ref for ref in body.metadata.get("ownerReferences") or [] if ref.get("kind") == "Konnect"), None)
    if not last or owner is None:
        return
    namespace = body.metadata.namespace or "default"
    seen: dict[tuple[str, str], str] = memo.setdefault("last_schedule", {})
    key = (namespace, owner["name"])
    if seen.get(key) == last:
        return
    kube: Kube = memo["kube"]
    try:
        kube.patch_status(API_VERSION, "Konnect", namespace, owner["name"], {"lastScheduleTime": last})
    except KubeError as exc:
        if exc.status != 404:
            raise
        return
    seen[key] = last
    logger.debug("Konnect %s/%s last scheduled at %s", namespace, owner["name"], last)


_MANAGED = {"app.kubernetes.io/managed-by": "konnectz-operator"}


def _child_key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or "default"), str(obj.get("kind")), str(meta.get("name")))


def repair_child(child: Mapping[str, Any], *, deleted: bool, kube: Kube, config: OperatorSettings) -> str | None:
    """Re-apply the render of a child that was deleted or edited; returns what was done, if anything.

    Level-based: the owner Konnect is read fresh and rendered again, so the repair is always to
    the current desired state (a Konnect being deleted, invalid or no longer having this child is
    left alone).
    """
    meta = child.get("metadata") or {}
    owner = owner_konnect(child)
    namespace = meta.get("namespace") or "default"
    if owner is None:
        return None
    konnect = kube.get(API_VERSION, "Konnect", namespace, owner)
    if konnect is None or (konnect.get("metadata") or {}).get("deletionTimestamp"):
        return None
    try:
        resolved = resolve(kube, konnect)
        validate_konnect(resolved.konnect, resolved.token)
    except (InvalidKonnect, NotImported, TokenMissing):
        return None
    if image_problem(resolved.konnect, config) or binding_problem(resolved.konnect, config):
        return None  # refused in its status: its children stay as they were
    for rendered in render_children(resolved.konnect, config, resolved.token):
        if rendered["kind"] != child.get("kind") or rendered["metadata"]["name"] != meta.get("name"):
            continue
        live = None if deleted else child  # the event carries the live object
        if not drifted(rendered, live):
            return None
        kopf.adopt(rendered, owner=kopf.Body(cast(kopf.RawBody, konnect)))
        return f"{rendered['kind']} {rendered['metadata']['name']} {apply(kube, rendered)}"
    return None


def _on_child_event(event: kopf.RawEvent, body: kopf.Body, memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> None:
    kind = event.get("type")
    if kind not in ("DELETED", "MODIFIED", "ADDED"):
        return
    kube: Kube = memo["kube"]
    config: OperatorSettings = memo["config"]
    if kind != "DELETED":
        # Most events are status updates of children that match what was last applied: answer
        # those from memory, without a request (500 konnects make thousands of such events).
        last = (memo.get("rendered") or {}).get(_child_key(body))
        if last is not None and not drifted(last, body):
            return
    done = repair_child(body, deleted=kind == "DELETED", kube=kube, config=config)
    if done:
        owner = owner_konnect(body)
        namespace = body.metadata.namespace or "default"
        konnect = kube.get(API_VERSION, "Konnect", namespace, owner or "")
        if konnect is not None:
            _event(
                kopf.Body(cast(kopf.RawBody, konnect)),
                "Normal",
                reason="DriftRepaired",
                message=f"{done}: it was {kind.lower()} outside the operator",
            )
        logger.info("Repaired drift of %s/%s: %s", namespace, body.metadata.name, done)


for _group, _version, _plural in (
    ("", "v1", "configmaps"),
    ("", "v1", "services"),
    ("apps", "v1", "deployments"),
    ("batch", "v1", "cronjobs"),
    ("networking.k8s.io", "v1", "ingresses"),
):
    kopf.on.event(_group, _version, _plural, labels=_MANAGED, id=f"drift-{_plural}")(_on_child_event)
