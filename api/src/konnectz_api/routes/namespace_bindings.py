"""Namespace bindings (administrators): which Konnectz account the Konnects applied with kubectl in a
Kubernetes namespace are imported into (konnectz_api.crud.namespace_bindings)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel, EmailStr, Field

from konnectz_api.crud import admins, namespace_bindings
from konnectz_api.deps import SessionDep, SettingsDep, SignedInUser
from konnectz_api.errors import Conflict, Forbidden, NotFound, Unprocessable
from konnectz_api.models import User
from konnectz_api.schemas import Message

router = APIRouter(prefix="/api/v1", tags=["admin"])

#: The 403 of these routes: who may, and how one becomes an administrator.
NOT_AN_ADMINISTRATOR = f"Only an administrator can bind namespaces. {admins.HOW_TO_NAME}"
_FORBIDDEN = {"model": Message, "description": "not an administrator (the message says how one is named)"}
NamespacePath = Annotated[str, Path(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")]


class NamespaceBindingOut(BaseModel):
    namespace: str
    owner_email: str = Field(description="the owner of the bound account")
    source: str = Field(description="administrator (the CLI or this API) or environment (KONNECTZ_NAMESPACE_BINDINGS)")
    bound_at: datetime | None
    pending: str = Field("", description="an environment's binding not applied yet: why (its owner is not there yet)")


class NamespaceBindingIn(BaseModel):
    owner_email: EmailStr = Field(description="the owner of the account (an account holder, not a team member)")


def namespace_admin(user: SignedInUser, settings: SettingsDep) -> User:
    """An administrator, named by the installer (konnectz_api.crud.admins); checked before the body."""
    if not admins.is_administrator(user, settings):
        raise Forbidden(NOT_AN_ADMINISTRATOR)
    return user


NamespaceAdmin = Annotated[User, Depends(namespace_admin)]


def _out(row: namespace_bindings.Binding) -> NamespaceBindingOut:
    return NamespaceBindingOut(
        namespace=row.namespace,
        owner_email=row.owner_email,
        source=row.source,
        bound_at=row.bound_at,
        pending=row.pending,
    )


@router.get(
    "/admin/namespace_bindings",
    response_model=list[NamespaceBindingOut],
    summary="The Kubernetes namespaces bound to Konnectz accounts (administrators)",
    responses={403: _FORBIDDEN},
)
def list_bindings(user: NamespaceAdmin, session: SessionDep, settings: SettingsDep) -> list[NamespaceBindingOut]:
    return [_out(row) for row in namespace_bindings.listed(session, settings.namespace_bindings)]


@router.put(
    "/admin/namespace_bindings/{namespace}",
    response_model=NamespaceBindingOut,
    summary="Bind a Kubernetes namespace to the account of an owner (administrators)",
    description="Konnects applied with kubectl or GitOps in the namespace are then imported as flows of that "
    "account, for its owner or a team member whose access level allows publishing (the konnectz.io/owner "
    "annotation); Konnects refused there so far are examined again at once.",
    responses={
        403: _FORBIDDEN,
        404: {"model": Message, "description": "no user with this e-mail"},
        409: {"model": Message, "description": "bound by KONNECTZ_NAMESPACE_BINDINGS"},
        422: {"model": Message, "description": "the user is not a verified account holder"},
    },
)
def put_binding(
    namespace: NamespacePath,
    body: NamespaceBindingIn,
    user: NamespaceAdmin,
    session: SessionDep,
    request: Request,
) -> NamespaceBindingOut:
    try:
        row = namespace_bindings.bind(session, namespace, body.owner_email, bound_by=user.id)
    except namespace_bindings.BindingError as exc:
        raise _error(exc) from exc
    sync = getattr(request.app.state, "cluster_sync", None)
    if sync is not None:
        sync.retry_soon()
    owner = session.get(User, row.owner_id)
    return NamespaceBindingOut(
        namespace=row.namespace,
        owner_email=owner.email if owner is not None else body.owner_email,
        source=row.source,
        bound_at=row.bound_at,
    )


@router.delete(
    "/admin/namespace_bindings/{namespace}",
    response_model=Message,
    summary="Remove a namespace's binding (administrators): new Konnects there are refused",
    description="Flows already imported from the namespace stay published and keep running.",
    responses={
        403: _FORBIDDEN,
        404: {"model": Message, "description": "the namespace is not bound"},
        409: {"model": Message, "description": "bound by KONNECTZ_NAMESPACE_BINDINGS"},
    },
)
def delete_binding(namespace: NamespacePath, user: NamespaceAdmin, session: SessionDep) -> Message:
    try:
        removed = namespace_bindings.unbind(session, namespace)
    except namespace_bindings.BindingError as exc:
        raise _error(exc) from exc
    if not removed:
        raise NotFound(f"namespace {namespace} is not bound")
    return Message(
        message=f"namespace {namespace} unbound: new Konnects there are refused; imported flows keep running"
    )


def _error(exc: namespace_bindings.BindingError) -> Exception:
    if exc.kind == "unknown":
        return NotFound(str(exc))
    if exc.kind == namespace_bindings.ENVIRONMENT:
        return Conflict(str(exc))
    return Unprocessable(str(exc))
