"""Publishing a konnect: compile its draft, subscribe its app webhook, hand the spec to the deployer,
and keep the publish as the konnect's next revision.

The routes (``routes/konnects.py``, ``routes/revisions.py``) only call :func:`publish` and build their
reply; what can go wrong is a typed error, answered by the single mapping of
:mod:`konnectz_api.errors`:

- :class:`PublishRefused` (422): the draft does not compile, or the app refused the webhook
  subscription; the draft is kept, the reply names the konnect (``{"message", "konnect_id"}``);
- :class:`ChangedInCluster` (409): the published ``Konnect`` was changed in the cluster in a field
  this publish would overwrite;
- :class:`DeployUnavailable` (503): the deployer could not be reached;
- :class:`~konnectz_api.errors.Conflict` (409): another publish of the same flow took the revision
  number meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from konnectz_api.compile.flow import CompileError, compile_flow
from konnectz_api.compile.plan import app_names
from konnectz_api.core.config import Settings
from konnectz_api.crud import revisions as revision_crud
from konnectz_api.crud.users import user_timezone
from konnectz_api.db import run_db
from konnectz_api.errors import ApiError, Conflict, Unprocessable
from konnectz_api.models import Konnect, User
from konnectz_api.params import MAX_ID
from konnectz_api.services import app_webhooks, flow_calls, review
from konnectz_api.services.deployer import DeployConflict, Deployer, DeployError
from konnectz_contracts.spec import FlowSpec

__all__ = [
    "ChangedInCluster",
    "DeployUnavailable",
    "PublishRefused",
    "display_name",
    "publish",
]


class PublishRefused(Unprocessable):
    """The flow cannot be published as it is (it does not compile, or its app refused the webhook
    subscription): 422 ``{"message", "konnect_id"}``, the draft kept for the user to fix."""

    def __init__(self, message: str, *, konnect_id: int) -> None:
        super().__init__(message, konnect_id=konnect_id)
        self.konnect_id = konnect_id


class DeployUnavailable(ApiError):
    status_code = 503


class ChangedInCluster(ApiError):
    """The published Konnect was changed with kubectl (or GitOps) in a field this publish would overwrite."""

    status_code = 409


def display_name(konnect: Konnect) -> str:
    """The flow's name, or its app names joined with dashes when it has none."""
    if konnect.konnect_name:
        return konnect.konnect_name
    left, right = app_names(konnect.canvas_json)
    return "-".join(n for n in [left or "", *right] if n)


def _owns(session: Any, konnect_id: int, owner_id: int) -> bool:
    """Whether flow ``konnect_id`` exists and belongs to ``owner_id`` (a failure alert's flow)."""
    if not 0 < konnect_id <= MAX_ID:
        return False
    other = session.get(Konnect, konnect_id)
    return other is not None and other.owner_id == owner_id


async def publish(
    konnect: Konnect,
    user: User,
    session: Session,
    settings: Settings,
    deployer: Deployer,
    *,
    actor: User | None = None,
    message: str | None = None,
    restored_from: int | None = None,
    prepare: Callable[[Session], None] | None = None,
) -> int:
    """Compile, hand to the deployer and keep the publish as the konnect's next revision; the
    revision's number.

    ``user`` is the account the flow belongs to, ``actor`` the person who published (a team member
    publishes in the account that added them); ``message`` and ``restored_from`` go to the revision.

    Async for the app and the deployer; each database step is a short transaction of its own in the
    thread pool (``run_db``), none open while the app or the deployer is called. ``prepare`` changes
    the draft in the compiling transaction (a restore): a flow that does not compile keeps its draft."""
    konnect_id = konnect.id  # (a transaction rolled back expires the object's attributes)
    try:
        spec = await run_db(session, _compiled, konnect, user, prepare)
    except CompileError as exc:
        # The draft is kept: the user fixes the node the message names and publishes again.
        raise PublishRefused(str(exc), konnect_id=konnect_id) from exc
    try:
        await app_webhooks.subscribe(session, settings, konnect, review.webhook_url(settings, konnect))
    except app_webhooks.SubscribeError as exc:
        raise PublishRefused(str(exc), konnect_id=konnect_id) from exc
    try:
        await deployer.publish(spec, owner_email=user.email)
    except DeployConflict as exc:
        await app_webhooks.unsubscribe(session, settings, konnect)
        raise ChangedInCluster(f"The konnect was saved but not published: {exc}", konnect_id=konnect_id) from exc
    except DeployError as exc:
        await app_webhooks.unsubscribe(session, settings, konnect)
        raise DeployUnavailable(
            f"The konnect was saved but could not be published: {exc}", konnect_id=konnect_id
        ) from exc
    try:
        await run_db(
            session,
            _published,
            konnect,
            spec,
            settings=settings,
            message=message,
            actor=actor or user,
            restored_from=restored_from,
        )
    except IntegrityError as exc:  # another publish of the same flow took this number meanwhile
        raise Conflict(
            "The flow was published by someone else at the same moment: reload it and publish again.",
            konnect_id=konnect_id,
        ) from exc
    assert spec.revision is not None
    return spec.revision


def _compiled(session: Session, konnect: Konnect, user: User, prepare: Callable[[Session], None] | None) -> FlowSpec:
    """The konnect's spec, naming the revision it will be (raises CompileError)."""
    if prepare is not None:
        prepare(session)
    spec = compile_flow(
        konnect.canvas_json,
        konnect_id=konnect.id,
        owner_id=user.id,
        name=display_name(konnect),
        webhook_token=konnect.webhook_token,
        timezone=user_timezone(user),
        owns_flow=lambda other: _owns(session, other, konnect.owner_id),
    )
    # call a flow: the flows it calls are the account's published flow-call flows, in no cycle, not too deep
    flow_calls.check_calls(session, spec, konnect.owner_id)
    # The spec names its revision (the task log and the Konnect's status show which one runs).
    number = revision_crud.next_number(session, konnect_id=konnect.id)
    return spec.model_copy(update={"revision": number})


def _published(
    session: Session,
    konnect: Konnect,
    spec: FlowSpec,
    *,
    settings: Settings,
    message: str | None,
    actor: User,
    restored_from: int | None,
) -> None:
    """The deployer took the spec: the konnect is Published and the spec kept as its revision."""
    number = spec.revision
    assert number is not None
    konnect.status = "Published"
    konnect.published_spec = spec.model_dump(mode="json")
    konnect.published_at = datetime.now(UTC)
    konnect.draft_pending = False
    konnect.live_revision = number
    revision_crud.add(
        session,
        konnect=konnect,
        number=number,
        spec=konnect.published_spec,
        message=(message or "").strip(),
        published_by=actor.id,
        published_by_email=actor.email,
        restored_from=restored_from,
    )
    revision_crud.apply_retention(session, konnect_id=konnect.id, keep=settings.revisions_keep, live=number)
