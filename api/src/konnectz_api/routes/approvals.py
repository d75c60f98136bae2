"""Approvals (the ``approval`` step, docs/waits.md): the request a runner records, the e-mailed links, the
pending list.

- ``POST /api/v1/internal/approvals`` (a runner, with the konnect's scoped token): records the
  approval once per (run, step) and e-mails each approver an Approve and a Reject link. The approvers
  must be the flow's owner or named members of the owner's team (``parent_id`` = owner, kind
  ``team``); anyone else is refused (403) and the step fails saying so.
- ``GET /api/v1/approvals/decide/{token}``: a page naming the flow, the message and the decision, with
  a button to confirm it; or why the link no longer works (used, decided by someone else, expired).
  It changes nothing, so mail scanners and link previews cannot decide.
- ``POST /api/v1/approvals/decide/{token}``: the confirmation. The decision is taken in NATS by the
  run's wait (:func:`konnectz_runner.bus.decide_call`: a compare-and-set, decided once); the row
  records it. A second click, or another approver afterwards: 410 with who decided.
- ``GET /api/v1/approvals``: the signed-in person's pending approvals: of their flows (the owner), or
  naming them (a team member: only those of the account they work in that name them).
- ``POST /api/v1/approvals/{id}/decide``: the web app's Pending approvals page: the signed-in person
  decides one their list shows (anyone else: 404), by the same decision as the links (:func:`_take`).

A link is ``<public url>/api/v1/approvals/decide/<base64url(id:email:decision)>.<HMAC>`` under a key
derived from the api's secret key: single-use (the wait is decided once) and expiring (the row's
``until``, the step's timeout).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import html
from datetime import UTC, datetime
from typing import Literal

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from pydantic import AwareDatetime, BaseModel, Field
from sqlalchemy import ColumnElement, and_, exists, or_, type_coerce
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session

from konnectz_api.core.config import Settings
from konnectz_api.db import run_db
from konnectz_api.deps import BusDep, SessionDep, SettingsDep, SignedInUser
from konnectz_api.errors import Forbidden, Gone, NotFound, ServiceUnavailable
from konnectz_api.models import Approval, Konnect, TaskLog, User
from konnectz_api.routes.credentials import Bearer, _scoped_konnect
from konnectz_api.services.mail import send_mail
from konnectz_contracts.steps.approval import MAX_APPROVERS
from konnectz_contracts.waits import KV_WAITS
from konnectz_runner.bus import decide_call

__all__ = ["internal_router", "router"]

router = APIRouter(prefix="/api/v1/approvals", tags=["approvals"])
internal_router = APIRouter(prefix="/api/v1/internal", tags=["internal"])

Decision = Literal["approved", "rejected"]
_DECISIONS: tuple[Decision, ...] = ("approved", "rejected")


class ApprovalIn(BaseModel):
    konnect_id: int = Field(ge=1, lt=2**63)
    run_id: str = Field(min_length=1, max_length=64)
    step_id: str = Field(min_length=1, max_length=100)
    approvers: list[str] = Field(min_length=1, max_length=MAX_APPROVERS)
    message: str = Field(default="", max_length=10_000)
    until: AwareDatetime


class ApprovalRecorded(BaseModel):
    approvers: list[str]


class PendingApproval(BaseModel):
    id: int
    konnect_id: int
    konnect_name: str
    run_id: str
    step_id: str
    approvers: list[str]
    message: str
    created_at: datetime
    until: datetime


class PendingApprovals(BaseModel):
    approvals: list[PendingApproval]


# --- links -------------------------------------------------------------------------------------------
def _key(settings: Settings) -> bytes:
    return hmac.new(settings.secret_key.encode(), b"konnectz approval links", hashlib.sha256).digest()


def link_token(settings: Settings, approval_id: int, email: str, decision: Decision) -> str:
    payload = f"{approval_id}:{decision}:{email}"
    signature = hmac.new(_key(settings), payload.encode(), hashlib.sha256).hexdigest()[:32]
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=") + "." + signature


def _read_token(settings: Settings, token: str) -> tuple[int, Decision, str] | None:
    encoded, _, signature = token.partition(".")
    if not encoded or len(signature) != 32 or len(token) > 1000:
        return None
    try:
        payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    expected = hmac.new(_key(settings), payload.encode(), hashlib.sha256).hexdigest()[:32]
    if not hmac.compare_digest(expected, signature):
        return None
    number, _, rest = payload.partition(":")
    decision, _, email = rest.partition(":")
    if not number.isdigit() or decision not in _DECISIONS or not email:
        return None
    return int(number), decision, email


def _link(settings: Settings, approval_id: int, email: str, decision: Decision) -> str:
    token = link_token(settings, approval_id, email, decision)
    return f"{settings.public_url.rstrip('/')}/api/v1/approvals/decide/{token}"


# --- the runner's request ----------------------------------------------------------------------------
def _allowed(session: Session, konnect: Konnect) -> set[str]:
    owner = session.get(User, konnect.owner_id)
    allowed = {owner.email.lower()} if owner is not None else set()
    members = session.query(User.email).filter(User.parent_id == konnect.owner_id, User.member_kind == "team")
    allowed.update(email.lower() for (email,) in members)
    return allowed


def _record(session: Session, settings: Settings, creds: Bearer, body: ApprovalIn) -> tuple[Approval, Konnect, bool]:
    konnect = _scoped_konnect(session, settings, creds, body.konnect_id)
    approvers = [a.strip().lower() for a in body.approvers]
    refused = [a for a in approvers if a not in _allowed(session, konnect)]
    if refused:
        raise Forbidden(
            f"Not an approver of this flow: {', '.join(refused[:5])}. Approvers must be the flow's owner or "
            "members of the owner's team."
        )
    found = session.query(Approval).filter(Approval.run_id == body.run_id, Approval.step_id == body.step_id).first()
    if found is not None:  # the same request again (a redelivered run): recorded and mailed once
        return found, konnect, False
    approval = Approval(
        konnect_id=konnect.id,
        owner_id=konnect.owner_id,
        run_id=body.run_id,
        step_id=body.step_id,
        approvers=approvers,
        message=body.message,
        until=body.until,
    )
    session.add(approval)
    session.flush()
    return approval, konnect, True


def _mail(settings: Settings, approval: Approval, konnect: Konnect) -> None:
    until = approval.until.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    for email in approval.approvers:
        approve, reject = (_link(settings, approval.id, email, d) for d in _DECISIONS)
        text = (
            f"The flow \u201c{konnect.konnect_name}\u201d asks for your approval.\n\n{approval.message}\n\n"
            f"Approve: {approve}\nReject: {reject}\n\nThe links work once, until {until}."
        )
        send_mail(settings, to=email, subject=f"Approval needed: {konnect.konnect_name}", text=text)


@internal_router.post(
    "/approvals",
    response_model=ApprovalRecorded,
    summary="Record an Approval step's request and e-mail its links (a runner, scoped token)",
)
async def request_approval(
    body: ApprovalIn, session: SessionDep, settings: SettingsDep, creds: Bearer
) -> ApprovalRecorded:
    approval, konnect, created = await run_db(session, _record, settings, creds, body)
    if created:
        await run_db(session, lambda _s: _mail(settings, approval, konnect))
    return ApprovalRecorded(approvers=list(approval.approvers))


# --- the links ---------------------------------------------------------------------------------------
def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    document = (
        "<!doctype html><html><head><meta charset='utf-8'><meta name='robots' content='noindex'>"
        f"<title>{html.escape(title)}</title></head><body style='font-family:sans-serif;max-width:40em;"
        f"margin:3em auto'><h1>{html.escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(document, status_code=status, headers={"Cache-Control": "no-store"})


def _load(session: Session, settings: Settings, token: str) -> tuple[Approval, Konnect, Decision, str] | None:
    read = _read_token(settings, token)
    if read is None:
        return None
    number, decision, email = read
    approval = session.get(Approval, number)
    if approval is None or email not in approval.approvers:
        return None
    konnect = session.get(Konnect, approval.konnect_id)
    if konnect is None:
        return None
    return approval, konnect, decision, email


def _gone(approval: Approval) -> HTMLResponse | None:
    """The page of a link that no longer works (decided, expired), or None."""
    if approval.decision is not None:
        at = approval.decided_at.strftime("%Y-%m-%d %H:%M UTC") if approval.decided_at else ""
        who = html.escape(approval.decided_by or "")
        return _page("Already decided", f"<p>This request was {approval.decision} by {who} at {at}.</p>", 410)
    if approval.until <= datetime.now(UTC):
        return _page("Link expired", "<p>Nobody decided in time: the run went on without this decision.</p>", 410)
    return None


_INVALID = "<p>This link is not valid (it is incomplete, altered, or not for this request).</p>"


@router.get("/decide/{token}", response_class=HTMLResponse, include_in_schema=False)
async def decision_page(token: str, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    loaded = await run_db(session, _load, settings, token)
    if loaded is None:
        return _page("Invalid link", _INVALID, 404)
    approval, konnect, decision, email = loaded
    gone = _gone(approval)
    if gone is not None:
        return gone
    verb = "Approve" if decision == "approved" else "Reject"
    body = (
        f"<p>The flow \u201c{html.escape(konnect.konnect_name)}\u201d asks {html.escape(email)} for approval.</p>"
        f"<blockquote>{html.escape(approval.message)}</blockquote>"
        f"<form method='post'><button type='submit'>{verb}</button></form>"
    )
    return _page(f"{verb} this request?", body)


def _decided(session: Session, approval_id: int, decision: Decision, email: str) -> None:
    approval = session.get(Approval, approval_id)
    if approval is not None and approval.decision is None:
        approval.decision, approval.decided_by, approval.decided_at = decision, email, datetime.now(UTC)


async def _take(session: Session, bus: BusDep, approval: Approval, decision: Decision, email: str) -> tuple[int, str]:
    """Decide ``approval`` as ``email`` did: the run's wait by its compare-and-set (decided once), then the
    row. (status, what happened): 200 decided, 410 decided before, 503 not now. The links and the signed-in
    call both decide here."""
    body = {"decision": decision, "approved": decision == "approved", "decided_by": email}
    try:
        kv = await bus.js.key_value(KV_WAITS)
        answer = await decide_call(bus.js, kv, approval.konnect_id, approval.run_id, approval.step_id, body)
    except Exception:
        return 503, "The decision could not be recorded right now; try again."
    if answer.status in (200, 202):
        await run_db(session, _decided, approval.id, decision, email)
        return 200, f"The request was {decision}. The run goes on."
    if answer.status == 410:
        return 410, str(answer.body.get("error", "Already decided"))
    return answer.status, "The decision is being taken; try again."


@router.post("/decide/{token}", response_class=HTMLResponse, include_in_schema=False)
async def decide(token: str, session: SessionDep, settings: SettingsDep, bus: BusDep) -> HTMLResponse:
    loaded = await run_db(session, _load, settings, token)
    if loaded is None:
        return _page("Invalid link", _INVALID, 404)
    approval, _konnect, decision, email = loaded
    gone = _gone(approval)
    if gone is not None:
        return gone
    status, said = await _take(session, bus, approval, decision, email)
    if status == 200:
        return _page("Thank you", f"<p>{html.escape(said)}</p>")
    if status == 410:
        return _page("Already decided", f"<p>{html.escape(said)}</p>", 410)
    return _page("Try again", f"<p>{html.escape(said)}</p>", status)


# --- the pending list --------------------------------------------------------------------------------
def _scope(person: User) -> ColumnElement[bool]:
    """The approvals ``person`` may see and decide: a team member those of the account they work in that
    name them; anyone else those of their own flows and those naming them."""
    names_them = type_coerce(Approval.approvers, JSONB).contains([person.email.lower()])
    if person.member_kind == "team" and person.parent_id is not None:
        return and_(Approval.owner_id == person.parent_id, names_them)
    return or_(Approval.owner_id == person.id, names_them)


def _pending(session: Session, person: User) -> list[PendingApproval]:
    """The pending approvals ``person`` (the one signed in) may see: a team member those of the account
    they work in that name them; anyone else those of their own flows and those naming them. Not those
    of a run that has ended (its task log is stored): a cancelled run's approval is not pending."""
    rows = (
        session.query(Approval, Konnect.konnect_name)
        .join(Konnect, Konnect.id == Approval.konnect_id)
        .filter(Approval.decision.is_(None), Approval.until > datetime.now(UTC), _scope(person))
        # a run that ended without a decision (cancelled through run control) waits for nobody any more
        .filter(~exists().where(TaskLog.run_id == Approval.run_id))
        .order_by(Approval.created_at)
        .limit(200)
        .all()
    )
    return [
        PendingApproval(
            id=a.id,
            konnect_id=a.konnect_id,
            konnect_name=name,
            run_id=a.run_id,
            step_id=a.step_id,
            approvers=list(a.approvers),
            message=a.message,
            created_at=a.created_at,
            until=a.until,
        )
        for a, name in rows
    ]


@router.get(
    "",
    response_model=PendingApprovals,
    summary="The signed-in user's pending approvals: of their flows, or naming them as an approver",
)
async def pending_approvals(person: SignedInUser, session: SessionDep) -> PendingApprovals:
    return PendingApprovals(approvals=await run_db(session, _pending, person))


class DecisionIn(BaseModel):
    decision: Decision


class DecisionOut(BaseModel):
    status: Decision
    message: str


def _visible(session: Session, person: User, approval_id: int) -> Approval | None:
    return session.query(Approval).filter(Approval.id == approval_id, _scope(person)).first()


@router.post(
    "/{approval_id}/decide",
    response_model=DecisionOut,
    summary="Approve or reject one of the signed-in user's pending approvals (as the mailed links do)",
    responses={
        404: {"description": "No such approval for this user"},
        410: {"description": "Already decided or expired"},
    },
)
async def decide_signed_in(
    approval_id: int, body: DecisionIn, person: SignedInUser, session: SessionDep, bus: BusDep
) -> DecisionOut:
    """The Pending approvals page's buttons: the person may decide what they see in their pending list
    (the owner of the flow, or a team member it names); the decision is recorded as theirs."""
    if not 0 < approval_id < 2**63:
        raise NotFound("No such approval")
    approval = await run_db(session, _visible, person, approval_id)
    if approval is None:
        raise NotFound("No such approval")
    if approval.decision is not None:
        at = approval.decided_at.strftime("%Y-%m-%d %H:%M UTC") if approval.decided_at else ""
        raise Gone(f"Already decided: {approval.decision} by {approval.decided_by} at {at}.")
    if approval.until <= datetime.now(UTC):
        raise Gone("Expired: nobody decided in time, the run went on without this decision.")
    status, said = await _take(session, bus, approval, body.decision, person.email.lower())
    if status == 200:
        return DecisionOut(status=body.decision, message=said)
    if status == 410:  # decided at the same moment by a link or another approver, or timed out
        raise Gone(said.replace("This link was used already", "Already decided").replace("This link has", "It has"))
    raise ServiceUnavailable(said, headers={"Retry-After": "1"})
