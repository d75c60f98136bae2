"""The api's view of published flows follows the cluster's Konnects (Kubernetes deployer only).

The Konnect resource is the published state; PostgreSQL holds drafts. At start the api lists the
Konnects of its namespace and reconciles every flow with them, then follows a watch:

- a Konnect without ``spec.konnectId`` was applied with kubectl (or a GitOps tool): it is
  imported only from a namespace an administrator bound to a Konnectz account, and only when its
  ``konnectz.io/owner`` annotation names that account's owner or a team member who may publish
  there (:mod:`konnectz_api.crud.namespace_bindings`); the flow (new, Published, with a canvas made
  from the spec) belongs to the account. The api writes back the ids, the owner label and the
  ``tokenSecret`` reference (server-side apply, never forced) and the token's Secret. An unbound
  namespace, an owner who may not publish there or an invalid flow is refused: the api says why in
  the Konnect's ``konnectz.io/refused`` annotation, the operator shows it in the status (phase
  Failed, message), and nothing is created. A Konnect refused for its binding or its owner is
  examined again every cycle of the watch (``watch_seconds``), and at once on the replica that
  serves an administrator's binding (:meth:`ClusterSync.retry_waiting`);
- a Konnect of a flow of this api that was edited in the cluster updates that flow (its published
  spec and canvas), so the editor shows the change;
- a deleted Konnect withdraws its flow (Draft), and so does, at start, a Published flow whose
  Konnect is gone.

A flow follows one resource only: the Konnect the api created for it (publish) or imported, whose
Kubernetes UID is recorded on the flow (``konnects.resource_uid``). ``spec.konnectId`` and
``spec.ownerId`` are readable by anyone who may list Konnects, so another Konnect naming them (a
copy under another name, or a re-apply after the flow's resource was deleted) is refused in its
status ("konnectId N is claimed by another resource") and changes nothing: neither the flow's
published spec, canvas or name, nor its status (its deletion withdraws nothing). The api's own
publish records the resource it creates under the flow's claim lock (:meth:`ClusterSync.claim`), so
the watch event of a new resource never races the record. A GitOps re-apply of a Konnect that still
carries the ids of a flow whose resource was deleted is refused the same way: leave out
``konnectId`` and ``ownerId`` to import it as a new flow, or publish the flow again from the editor.
A Published flow from before UIDs were recorded adopts the oldest Konnect that names it.

Every replica of the api runs this; an import holds a PostgreSQL advisory lock on the Konnect's
name and reads the resource again, so two replicas import it once.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections.abc import Iterator, Mapping, Set
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import or_, text, update
from sqlalchemy.orm import Session, sessionmaker

from konnectz_api.compile.decompile import canvas_of
from konnectz_api.compile.flow import CompileError, compile_flow
from konnectz_api.core.security import new_token
from konnectz_api.crud import members, namespace_bindings
from konnectz_api.crud.users import user_timezone
from konnectz_api.models import Konnect, User
from konnectz_api.services.deployer import Claim, DeployError, KubernetesDeployer
from konnectz_contracts.resource import (
    API_VERSION,
    GROUP,
    KIND,
    KONNECT_ID_LABEL,
    OWNER_ANNOTATION,
    OWNER_LABEL,
    PLURAL,
    REFUSED_ANNOTATION,
    VERSION,
    runner_flow,
    token_secret_name,
)
from konnectz_contracts.spec import FlowSpec

__all__ = ["ClusterSync"]

log = logging.getLogger(__name__)
PUBLISHED = "Published"
DRAFT = "Draft"
_TOKEN_KINDS = ("webhook", "form")


def _lock_key(namespace: str, name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"konnect:{namespace}/{name}".encode()).digest()[:8], "big", signed=True)


def _claim_key(konnect_id: int) -> int:
    return int.from_bytes(hashlib.sha256(f"konnect-claim:{int(konnect_id)}".encode()).digest()[:8], "big", signed=True)


def _uid(item: dict[str, Any]) -> str:
    return str((item.get("metadata") or {}).get("uid") or "")


def _problem(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()))
    return f"spec.flow.{loc}: {err.get('msg')}" if loc else str(err.get("msg"))


class ClusterSync:
    """Reconciles the flows of the api's database with the Konnects of one namespace (a thread)."""

    def __init__(
        self,
        deployer: KubernetesDeployer,
        sessions: sessionmaker[Session],
        *,
        watch_seconds: int = 30,
        configured_bindings: Mapping[str, str] | None = None,
    ):
        self.deployer = deployer
        self.namespace = deployer.namespace
        self.sessions = sessions
        self.watch_seconds = watch_seconds
        self._api: Any = deployer._api
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.synced = threading.Event()  # set after the first full reconciliation
        # KONNECTZ_NAMESPACE_BINDINGS: applied at start; those whose owner is not there yet, every cycle.
        self.configured_bindings = dict(configured_bindings or {})
        self._bindings_waiting: list[str] | None = None  # None: not applied yet
        # Konnects refused for their namespace's binding or their owner: examined again every cycle.
        self._waiting: set[str] = set()
        self._waiting_lock = threading.Lock()
        deployer.binder = self  # the deployer's publishes record the resource they create (claim)

    # --- which resource a flow follows ------------------------------------------------------------
    def binding(self, konnect_id: int) -> Claim:
        with self.sessions() as session:
            row = session.get(Konnect, int(konnect_id))
            return _claim_of(row)

    @contextlib.contextmanager
    def claim(self, konnect_id: int) -> Iterator[Claim]:
        """The flow's claim under its PostgreSQL advisory lock (held until the block ends): the
        resource the block sets in ``Claim.uid`` is recorded as the flow's before the lock is released.
        The cluster sync takes the same lock before it refuses a resource as another's."""
        with self.sessions() as session:
            session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _claim_key(konnect_id)})
            row = session.get(Konnect, int(konnect_id))
            claim = _claim_of(row)
            yield claim
            if row is not None and claim.uid is not None and claim.uid != row.resource_uid:
                row.resource_uid = claim.uid
            session.commit()

    # --- the loop -------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="konnectz-cluster-sync", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        from kubernetes import watch  # optional: the Kubernetes deployer's
        from kubernetes.client.exceptions import ApiException  # optional: the Kubernetes deployer's

        failing = False
        while not self._stop.is_set():
            try:
                self.apply_bindings()
                version = self.sync_all()
                self.synced.set()
                if failing:
                    log.info("cluster sync: following the Konnects of %s again", self.namespace)
                failing = False
                while not self._stop.is_set():
                    stream = watch.Watch().stream(
                        self._api.list_namespaced_custom_object,
                        GROUP,
                        VERSION,
                        self.namespace,
                        PLURAL,
                        resource_version=version,
                        timeout_seconds=self.watch_seconds,
                        allow_watch_bookmarks=True,
                    )
                    for event in stream:
                        if event["type"] == "ERROR":  # e.g. the version expired: list again
                            raise ApiException(status=410, reason="watch error")
                        obj = event["object"]
                        version = (obj.get("metadata") or {}).get("resourceVersion") or version
                        if event["type"] == "DELETED":
                            self.withdraw(obj)
                        elif event["type"] in ("ADDED", "MODIFIED"):
                            self.reconcile(obj)
                        if self._stop.is_set():
                            break
                    self.apply_bindings()
                    self.retry_waiting()
            except ApiException as exc:
                if exc.status != 410:  # 410: the version is too old; list again
                    if not failing:
                        log.warning("cluster sync: %s %s; trying again", exc.status, exc.reason)
                    failing = True
                    self._stop.wait(2.0)
            except Exception as exc:
                if not failing:
                    log.warning("cluster sync failed (%s); trying again", exc or type(exc).__name__)
                failing = True
                self._stop.wait(2.0)

    def apply_bindings(self) -> None:
        """Apply ``KONNECTZ_NAMESPACE_BINDINGS``: all of it at start (the environment's bindings it no
        longer names removed), then only those still waiting for their owner to sign up and verify."""
        if self._bindings_waiting is not None and not self._bindings_waiting:
            return
        configured = self.configured_bindings
        prune = self._bindings_waiting is None
        if not prune:
            waiting = {line.split(":", 1)[0].removeprefix("namespace ") for line in self._bindings_waiting or []}
            configured = {ns: email for ns, email in configured.items() if ns in waiting}
        with self.sessions() as session:
            waiting_now = namespace_bindings.apply_configured(session, configured, prune=prune)
        for line in waiting_now:
            if line not in (self._bindings_waiting or []):
                log.warning("cluster sync: KONNECTZ_NAMESPACE_BINDINGS, %s: applied once it is", line)
        self._bindings_waiting = waiting_now

    def retry_waiting(self) -> None:
        """Examine again the Konnects refused for their namespace's binding or their owner (a binding
        was added, an owner signed up or was given an access level that publishes)."""
        from kubernetes.client.exceptions import ApiException  # optional: the Kubernetes deployer's

        with self._waiting_lock:
            names = sorted(self._waiting)
        for name in names:
            try:
                live = self._api.get_namespaced_custom_object(
                    GROUP, VERSION, self.namespace, PLURAL, name, _request_timeout=15
                )
            except ApiException as exc:
                if exc.status == 404:
                    self._waits(name, False)
                    continue
                raise
            self.reconcile(live)

    def retry_soon(self) -> None:
        """:meth:`retry_waiting` now, in a thread of its own (an administrator bound a namespace)."""

        def retry() -> None:
            try:
                self.retry_waiting()
            except Exception as exc:
                log.warning("cluster sync: could not examine the waiting Konnects again (%s)", exc)

        threading.Thread(target=retry, name="konnectz-cluster-sync-retry", daemon=True).start()

    def _waits(self, name: str, waiting: bool) -> None:
        with self._waiting_lock:
            if waiting:
                self._waiting.add(name)
            else:
                self._waiting.discard(name)

    def sync_all(self) -> str:
        """Reconcile every flow with the Konnects there are now; the list's resourceVersion."""
        listed = self._api.list_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, _request_timeout=30)
        present: set[int] = set()
        # Oldest first: a flow from before UIDs were recorded adopts the first Konnect naming it.
        items = sorted(listed.get("items") or [], key=lambda i: str((i.get("metadata") or {}).get("creationTimestamp")))
        for item in items:
            followed = self.reconcile(item)
            konnect_id = (item.get("spec") or {}).get("konnectId")
            if konnect_id is not None and followed:
                present.add(int(konnect_id))
        for konnect_id in self._withdraw(None, keep=present):
            log.info("cluster sync: konnect %s has no Konnect in %s: withdrawn", konnect_id, self.namespace)
        return str((listed.get("metadata") or {}).get("resourceVersion") or "")

    # --- one Konnect ----------------------------------------------------------------------------
    def reconcile(self, item: dict[str, Any]) -> bool:
        """Import or follow the Konnect; False when it names a flow it is not the resource of."""
        meta = item.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            self._waits(str(meta.get("name")), False)
            return True
        try:
            if (item.get("spec") or {}).get("konnectId") is None:
                self._import(item)
            else:
                return self._follow(item)
        except DeployError as exc:
            self._refuse(item, f"could not be imported: {exc}")
        except Exception:
            log.exception("cluster sync: Konnect %s/%s", self.namespace, meta.get("name"))
        return True

    def withdraw(self, item: dict[str, Any]) -> None:
        """The Konnect is gone: its flow is a draft again (its runners went with the resource). Only
        the flow's own resource withdraws it: a deleted copy naming its konnectId changes nothing."""
        konnect_id = (item.get("spec") or {}).get("konnectId")
        self._waits(item["metadata"]["name"], False)
        if konnect_id is not None:
            self.deployer.forget(int(konnect_id), item["metadata"]["name"])
        if konnect_id is not None and self._withdraw([int(konnect_id)], uid=_uid(item)):
            log.info("cluster sync: Konnect %s deleted: flow %s withdrawn", item["metadata"]["name"], konnect_id)

    def _withdraw(
        self, konnect_ids: list[int] | None, *, keep: Set[int] = frozenset(), uid: str | None = None
    ) -> list[int]:
        """Published flows among ``konnect_ids`` (all but ``keep`` when None) become drafts, those
        following the resource ``uid`` only when it is given (or following none recorded). One
        conditional UPDATE: a flow the user deleted or withdrew meanwhile stays as the user left it."""
        query = update(Konnect).where(Konnect.status == PUBLISHED)
        if konnect_ids is not None:
            query = query.where(Konnect.id.in_(konnect_ids))
        if keep:
            query = query.where(Konnect.id.not_in(keep))
        if uid is not None:
            query = query.where(or_(Konnect.resource_uid.is_(None), Konnect.resource_uid == uid))
        with self.sessions() as session:
            done = list(
                session.scalars(
                    query.values(status=DRAFT, published_spec=None, live_revision=None).returning(Konnect.id)
                )
            )
            session.commit()
        return done

    def _refuse(self, item: dict[str, Any], message: str) -> bool:
        """Say on the Konnect why the api does not take it (its REFUSED_ANNOTATION: the operator, the one
        writer of the status, shows it there for ``kubectl get konnects``); False when it says so already."""
        name = item["metadata"]["name"]
        if (item["metadata"].get("annotations") or {}).get(REFUSED_ANNOTATION) == message:
            return False
        log.warning("cluster sync: Konnect %s/%s %s", self.namespace, name, message)
        self._annotate(name, {REFUSED_ANNOTATION: message})
        return True

    def _accepted(self, item: dict[str, Any]) -> None:
        """The api takes the Konnect: an earlier refusal goes."""
        if REFUSED_ANNOTATION in (item["metadata"].get("annotations") or {}):
            self._annotate(item["metadata"]["name"], {REFUSED_ANNOTATION: None})

    def _annotate(self, name: str, annotations: dict[str, str | None]) -> None:
        """A merge patch of the Konnect's annotations (``None`` removes one); a failure is logged."""
        body = {"metadata": {"annotations": annotations}}
        try:
            self._api.patch_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, name, body, _request_timeout=15
            )
        except Exception as exc:
            log.warning("cluster sync: could not annotate Konnect %s: %s", name, exc)

    def _import(self, item: dict[str, Any]) -> None:
        meta = item["metadata"]
        name = meta["name"]
        email = str((meta.get("annotations") or {}).get(OWNER_ANNOTATION) or "").strip()
        with self.sessions() as session:
            if namespace_bindings.binding_of(session, self.namespace) is None:
                self._waits(name, True)
                self._refuse(item, namespace_bindings.not_bound(self.namespace))
                return
        if not email:
            self._waits(name, False)
            self._refuse(item, f"has no owner: name a Konnectz user by e-mail in the annotation {OWNER_ANNOTATION}")
            return
        with self.sessions() as session:
            session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _lock_key(self.namespace, name)})
            from kubernetes.client.exceptions import ApiException  # optional: the Kubernetes deployer's

            try:
                live = self._api.get_namespaced_custom_object(
                    GROUP, VERSION, self.namespace, PLURAL, name, _request_timeout=15
                )
            except ApiException as exc:
                if exc.status == 404:
                    return
                raise
            spec = live.get("spec") or {}
            if spec.get("konnectId") is not None:
                return  # imported meanwhile (another replica)
            try:
                user, actor = namespace_bindings.publisher(session, self.namespace, email)
            except namespace_bindings.Refused as refused:
                session.rollback()  # the lock: the next replica examines it now
                self._waits(name, True)
                if self._refuse(live, refused.message) and refused.actor is not None and refused.account is not None:
                    members.audit(
                        session,
                        account_id=refused.account.id,
                        actor=refused.actor,
                        action=f"import Konnect {self.namespace}/{name} (kubectl)",
                        outcome="denied",
                        address=None,
                    )
                return
            self._waits(name, False)
            kind = (spec.get("trigger") or {}).get("kind")
            token = new_token()
            konnect = Konnect(
                owner_id=user.id,
                status=PUBLISHED,
                canvas_json={},
                webhook_token=token,
                konnect_name=str(spec.get("displayName") or (spec.get("flow") or {}).get("name") or name)[:255],
            )
            session.add(konnect)
            session.flush()
            try:
                flow = FlowSpec.model_validate(
                    runner_flow({**spec, "konnectId": konnect.id, "ownerId": user.id}, token)
                )
            except ValidationError as exc:
                session.rollback()
                self._refuse(live, f"has an invalid flow: {_problem(exc)}")
                return
            konnect.canvas_json = canvas_of(flow)
            konnect.published_spec = flow.model_dump(mode="json")
            konnect.published_at = datetime.now(UTC)
            back: dict[str, Any] = {
                "apiVersion": API_VERSION,
                "kind": KIND,
                "metadata": {
                    "name": name,
                    "namespace": self.namespace,
                    "labels": {OWNER_LABEL: str(user.id), KONNECT_ID_LABEL: str(konnect.id)},
                },
                "spec": {"konnectId": konnect.id, "ownerId": user.id},
            }
            if kind in _TOKEN_KINDS:
                back["spec"]["trigger"] = {"kind": kind, "tokenSecret": token_secret_name(name)}
            stored = self.deployer.apply(back)
            self._accepted(live)
            if kind in _TOKEN_KINDS:
                self.deployer.apply_token(name, token, _uid(stored))
            uid = _uid(stored) or _uid(live)
            konnect.resource_uid = uid or None  # the one resource this flow follows
            session.commit()
            self.deployer.bind(name, konnect.id, uid, meta.get("annotations"))
            self.deployer.remember(konnect.id, name)
            log.info("cluster sync: Konnect %s imported as flow %s of %s (%s)", name, konnect.id, user.email, email)
            if actor.id != user.id:  # a team member published in the account: its audit log says who
                members.audit(
                    session,
                    account_id=user.id,
                    actor=actor,
                    action=f"import Konnect {self.namespace}/{name} (kubectl) as flow {konnect.id}",
                    outcome="allowed",
                    address=None,
                )

    def _follow(self, item: dict[str, Any]) -> bool:
        """A Konnect of a flow of this api: take over what was changed in the cluster. False when it is
        not the flow's resource (refused in its status, nothing changed)."""
        spec = item.get("spec") or {}
        konnect_id = int(spec["konnectId"])
        with self.sessions() as session:
            konnect = session.get(Konnect, konnect_id)
            if konnect is None or konnect.owner_id != spec.get("ownerId") or konnect.status == "DELETED":
                self._refuse(
                    item,
                    f"names konnectId {konnect_id}, which is not a flow of its owner here: leave out konnectId "
                    f"and ownerId (the api assigns them) and name the owner in the annotation {OWNER_ANNOTATION}",
                )
                return False
            if not self._claimed(session, konnect, _uid(item)):
                self._refuse(
                    item,
                    f"konnectId {konnect_id} is claimed by another resource: flow {konnect_id} follows only the "
                    "Konnect the api created or imported for it. To import this one as a new flow, leave out "
                    "konnectId and ownerId (the api assigns them); to run the flow again, publish it from the editor",
                )
                return False
            self._accepted(item)
            self.deployer.remember(konnect_id, item["metadata"]["name"])
            try:  # the operator runs it once bound (again: after a new credentials key, or an older api)
                self.deployer.bind(
                    item["metadata"]["name"], konnect_id, _uid(item), item["metadata"].get("annotations")
                )
            except DeployError as exc:
                log.warning("cluster sync: could not bind Konnect %s: %s", item["metadata"]["name"], exc)
            try:
                flow = FlowSpec.model_validate(runner_flow(spec, konnect.webhook_token))
            except ValidationError:
                return True  # the operator reports it in the status
            published = flow.model_dump(mode="json")
            if konnect.status == PUBLISHED and konnect.published_spec == published:
                return True
            before = self._compiled(session, konnect)
            if before is None or _without_name(before) != _without_name(flow):
                unchanged = _unchanged(before, flow)
                konnect.canvas_json = canvas_of(flow, konnect.canvas_json, unchanged=unchanged)
                konnect.konnect_name = str(spec.get("displayName") or flow.name)[:255]
            konnect.published_spec = published
            konnect.status = PUBLISHED
            konnect.published_at = konnect.published_at or datetime.now(UTC)
            session.commit()
        log.info("cluster sync: flow %s follows its Konnect %s", konnect_id, item["metadata"]["name"])
        return True

    @staticmethod
    def _claimed(session: Session, konnect: Konnect, uid: str) -> bool:
        """Whether the resource ``uid`` is the one the flow follows. A mismatch is read again under the
        flow's claim lock (an api publish creating the resource records it under that lock); a
        Published flow from before UIDs were recorded adopts the resource (recorded here)."""
        if uid and konnect.resource_uid == uid:
            return True
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _claim_key(konnect.id)})
        session.refresh(konnect)
        if uid and konnect.resource_uid == uid:
            return True
        if uid and _claim_of(konnect).legacy:
            konnect.resource_uid = uid
            session.commit()  # adopted even when nothing else changes (and the lock is released)
            log.info("cluster sync: flow %s adopts its Konnect (uid %s)", konnect.id, uid)
            return True
        return False

    @staticmethod
    def _compiled(session: Session, konnect: Konnect) -> FlowSpec | None:
        """The flow the draft's canvas compiles to (None when it does not)."""
        user = session.get(User, konnect.owner_id)
        if user is None:
            return None

        try:
            return compile_flow(
                konnect.canvas_json,
                konnect_id=konnect.id,
                owner_id=konnect.owner_id,
                name=(konnect.published_spec or {}).get("name") or konnect.konnect_name,
                webhook_token=konnect.webhook_token,
                timezone=user_timezone(user),
            )
        except (CompileError, Exception):
            return None


def _claim_of(konnect: Konnect | None) -> Claim:
    if konnect is None:
        return Claim()
    legacy = konnect.resource_uid is None and konnect.status == PUBLISHED
    return Claim(recorded=konnect.resource_uid, legacy=legacy)


def _without_name(flow: FlowSpec) -> dict[str, Any]:
    return flow.model_dump(mode="json", exclude={"name", "revision"})


def _unchanged(before: FlowSpec | None, after: FlowSpec) -> set[str]:
    """Node ids whose compiled step (or trigger) is the same in both flows."""
    if before is None:
        return set()
    same: set[str] = set()
    if before.trigger_id == after.trigger_id and before.trigger == after.trigger:
        same.add(after.trigger_id)
    old = {step.id: step for step in before.steps}
    for step in after.steps:
        if old.get(step.id) == step:
            same.add(step.id)
    return same
