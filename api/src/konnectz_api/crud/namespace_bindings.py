"""Namespace bindings: who may publish as whom from a Kubernetes namespace, stated by an administrator.

A Konnect applied with kubectl or a GitOps tool (no ``spec.konnectId``) names its owner by e-mail in the
annotation ``konnectz.io/owner``. Anyone who can create a Konnect in a namespace the api follows could
write any e-mail there, so the annotation alone proves nothing. The api imports such a Konnect only when

- its namespace is **bound** to a Konnectz account (an account holder: a user who is not a team
  member), and
- the annotation names that account's owner, or a **team member** of it whose access level allows
  publishing (``Create``, ``Create/Delete`` or ``FULL``: :func:`konnectz_api.crud.members.allows`
  with ``CREATE``, the level publishing needs in the UI).

The flow then belongs to the **account** (``owner_id`` is the account's id), as a flow a member publishes
in the UI does (the member works in the account: :func:`konnectz_api.deps.current_user`); a member's
import is written to the account's audit log with the member as its actor. Everything else is refused in
the Konnect's status (:mod:`konnectz_api.services.cluster_sync`).

A binding grants the people who can create Konnects in the namespace (its Kubernetes RBAC) the right to
publish flows in the bound account, which run with that account's connected app accounts. Only an
administrator (:mod:`konnectz_api.crud.admins`) binds, three ways:

- ``python -m konnectz_api namespace bind <namespace> <owner-email>`` (``unbind``, ``list``);
- ``PUT``/``DELETE /api/v1/admin/namespace_bindings/{namespace}``, ``GET /api/v1/admin/namespace_bindings``;
- ``KONNECTZ_NAMESPACE_BINDINGS`` (``team-a=a@example.com,team-b=b@example.com``; the chart's
  ``namespaceBindings``), applied when the api starts: those bindings are the environment's (source
  ``environment``), they win over one made by hand for the same namespace, cannot be changed with the CLI
  or the API, and go when the variable no longer names them. One naming an e-mail that is not a verified
  account holder yet waits, and is applied once it is (the cluster sync retries it every cycle).

Unbinding stops new imports; the flows already imported from the namespace stay published and keep
running (an administrator or the owner withdraws them: delete the Konnect or unpublish the flow).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.core.config import NAMESPACE_NAME
from konnectz_api.crud import members
from konnectz_api.crud.users import find_user_by_email
from konnectz_api.models import NamespaceBinding, User, utcnow
from konnectz_contracts.resource import OWNER_ANNOTATION

__all__ = [
    "ADMINISTRATOR",
    "ENVIRONMENT",
    "Binding",
    "BindingError",
    "Refused",
    "apply_configured",
    "bind",
    "binding_of",
    "how_to_bind",
    "listed",
    "not_bound",
    "publisher",
    "unbind",
]

ADMINISTRATOR = "administrator"
ENVIRONMENT = "environment"
ENV_NAME = "KONNECTZ_NAMESPACE_BINDINGS"


_BY_ENVIRONMENT = "namespace {namespace} is bound by " + ENV_NAME + " (the chart's namespaceBindings); change it there"


class BindingError(ValueError):
    """A binding that cannot be made or removed, with the message for the administrator; ``kind``:
    ``unknown`` (no such user), ``environment`` (the environment's binding) or ``invalid``."""

    def __init__(self, message: str, kind: str = "invalid") -> None:
        super().__init__(message)
        self.kind = kind


class Refused(Exception):
    """A Konnect that may not be imported: the message goes to its status."""

    def __init__(self, message: str, *, actor: User | None = None, account: User | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.actor = actor  # a team member of the bound account, refused (audited)
        self.account = account


def not_bound(namespace: str) -> str:
    """Why a Konnect of an unbound namespace is refused (its status message)."""
    return f"namespace {namespace} is not bound to a Konnectz account: {how_to_bind(namespace)}"


def how_to_bind(namespace: str) -> str:
    return (
        f"an administrator binds it with `python -m konnectz_api namespace bind {namespace} <owner-email>` "
        f"(or the admin API, or the chart value namespaceBindings)"
    )


def _account_holder(session: Session, email: str) -> User:
    """The verified account holder with ``email``: the owner a namespace can be bound to."""
    user = find_user_by_email(session, email=email)
    if user is None:
        raise BindingError(f"No user with e-mail {email}", "unknown")
    if user.email_verified_at is None:
        raise BindingError(f"{user.email} has not verified the e-mail address yet")
    if user.member_kind == members.TEAM:
        owner = session.get(User, user.parent_id) if user.parent_id is not None else None
        raise BindingError(
            f"{user.email} is a team member: bind the namespace to the account they work in"
            + (f" ({owner.email})" if owner is not None else "")
        )
    return user


def binding_of(session: Session, namespace: str) -> NamespaceBinding | None:
    return session.get(NamespaceBinding, namespace)


def bind(session: Session, namespace: str, owner_email: str, *, bound_by: int | None = None) -> NamespaceBinding:
    """Bind (or bind again, to another account) ``namespace``. Commits."""
    if not NAMESPACE_NAME.match(namespace):
        raise BindingError(f"{namespace!r} is not a Kubernetes namespace name")
    owner = _account_holder(session, owner_email)
    row = binding_of(session, namespace)
    if row is not None and row.source == ENVIRONMENT:
        raise BindingError(_BY_ENVIRONMENT.format(namespace=namespace), ENVIRONMENT)
    if row is None:
        row = NamespaceBinding(namespace=namespace, owner_id=owner.id, source=ADMINISTRATOR)
        session.add(row)
    row.owner_id, row.bound_by, row.bound_at = owner.id, bound_by, utcnow()
    session.commit()
    return row


def unbind(session: Session, namespace: str) -> bool:
    """Remove the binding of ``namespace``; False when there was none. Commits."""
    row = binding_of(session, namespace)
    if row is None:
        return False
    if row.source == ENVIRONMENT:
        raise BindingError(_BY_ENVIRONMENT.format(namespace=namespace), ENVIRONMENT)
    session.delete(row)
    session.commit()
    return True


@dataclass(frozen=True)
class Binding:
    """A line of ``namespace list``: a bound namespace (or one the environment names, not applied yet)."""

    namespace: str
    owner_email: str
    source: str
    bound_at: datetime | None
    pending: str = ""  # why the environment's binding is not applied yet


def listed(session: Session, configured: Mapping[str, str] | None = None) -> list[Binding]:
    """Every binding, by namespace, with the environment's not applied yet (``pending`` says why)."""
    rows = session.execute(select(NamespaceBinding, User.email).join(User, User.id == NamespaceBinding.owner_id)).all()
    found = [Binding(r.namespace, email, r.source, r.bound_at) for r, email in rows]
    seen = {(b.namespace, b.owner_email.lower()) for b in found if b.source == ENVIRONMENT}
    for namespace, email in (configured or {}).items():
        if (namespace, email.lower()) not in seen:
            try:
                _account_holder(session, email)
                why = "applied when the api next starts"
            except BindingError as exc:
                why = str(exc)
            found.append(Binding(namespace, email, ENVIRONMENT, None, pending=why))
    return sorted(found, key=lambda b: (b.namespace, b.pending != ""))


def apply_configured(session: Session, configured: Mapping[str, str], *, prune: bool) -> list[str]:
    """Make the environment's bindings (``KONNECTZ_NAMESPACE_BINDINGS``) the stored ones; ``prune``: also
    remove the environment's bindings it no longer names (at start). Commits. Returns why some are not
    applied (their owner is not a verified account holder yet)."""
    waiting: list[str] = []
    for namespace, email in configured.items():
        try:
            owner = _account_holder(session, email)
        except BindingError as exc:
            waiting.append(f"namespace {namespace}: {exc}")
            continue
        current = binding_of(session, namespace)
        if current is not None and current.owner_id == owner.id and current.source == ENVIRONMENT:
            continue
        values = {"owner_id": owner.id, "source": ENVIRONMENT, "bound_by": None, "bound_at": utcnow()}
        stmt = insert(NamespaceBinding).values(namespace=namespace, **values)
        session.execute(stmt.on_conflict_do_update(index_elements=["namespace"], set_=values))
    if prune:
        session.execute(
            delete(NamespaceBinding).where(
                NamespaceBinding.source == ENVIRONMENT, NamespaceBinding.namespace.not_in(sorted(configured))
            )
        )
    session.commit()
    return waiting


def may_publish(user: User, account: User) -> bool:
    """The account's owner, or a team member of it whose access level allows publishing."""
    if user.id == account.id:
        return True
    return (
        user.member_kind == members.TEAM
        and user.parent_id == account.id
        and members.allows(user.access, members.CREATE)
    )


def publisher(session: Session, namespace: str, email: str) -> tuple[User, User]:
    """``(account, actor)`` for a Konnect of ``namespace`` whose owner annotation is ``email``: the flow
    belongs to ``account``, ``actor`` is the annotated user (the owner or a member). Raises
    :class:`Refused` with the reason otherwise. The same refusal whether the e-mail is a user here or not."""
    binding = binding_of(session, namespace)
    if binding is None:
        raise Refused(not_bound(namespace))
    account = session.get(User, binding.owner_id)
    actor = find_user_by_email(session, email=email)
    if account is None or actor is None or not may_publish(actor, account):
        member = actor if actor is not None and account is not None and actor.parent_id == account.id else None
        raise Refused(
            f"owner {email!r} may not publish in the account bound to namespace {namespace}: name the account's "
            f"owner or a team member whose access level allows publishing ({OWNER_ANNOTATION})",
            actor=member if member is not None and member.member_kind == members.TEAM else None,
            account=account,
        )
    return account, actor
