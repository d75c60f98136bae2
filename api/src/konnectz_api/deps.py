"""Dependencies shared by the routes: settings, database session, the signed-in user.

Dependencies that do no blocking I/O are ``async def`` so FastAPI calls them on the event loop
instead of handing each to the thread pool (a thread hop per dependency per request). The sign-in
check is one query: the user and whether the token was revoked.

- ``SignedInUser``: the person who signed in (their own profile, password, sessions).
- ``Reader``: for the hot read routes (flow list, history, folders, task logs, dashboard stats): the
  account id and a connection of the async read pool, checked with one query on that connection
  and no thread hop (team members take the full ``CurrentUser`` path, audit included).
- ``CurrentUser``: the account whose data a call reads or changes. For a team member that is the account
  they were added to, and the member's access level is checked here, on every call, before the route
  runs (:mod:`konnectz_api.crud.members`) from the route's meaning (its method and path template); a
  route whose level depends on its body (a flow's status) uses ``AccountAt``, which reads the parsed,
  validated body model, never a header. Each change a member makes is written to the audit log.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import psycopg
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from psycopg_pool import AsyncConnectionPool
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from konnectz_api.bus import Bus
from konnectz_api.core.config import Settings, get_settings
from konnectz_api.core.security import AccessClaims, decode_access_claims
from konnectz_api.crud import members, reads, sessions
from konnectz_api.db import get_session, get_sessionmaker
from konnectz_api.errors import Forbidden, Unauthorized
from konnectz_api.models import User
from konnectz_api.services.deployer import Deployer


async def app_settings() -> Settings:
    """The settings (override this in tests, not ``get_settings``)."""
    return get_settings()


SettingsDep = Annotated[Settings, Depends(app_settings)]
SessionDep = Annotated[Session, Depends(get_session)]
_bearer = HTTPBearer(auto_error=False)


def current_claims(
    session: SessionDep,
    settings: SettingsDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> tuple[User, AccessClaims]:
    if creds is None:
        raise Unauthorized("Sign in to continue")
    claims = decode_access_claims(creds.credentials, secret=settings.secret_key)
    user = sessions.signed_in(session, claims=claims) if claims is not None and 0 < claims.user_id < 2**63 else None
    if claims is None or user is None:
        raise Unauthorized("Your session has expired. Please sign in again.")
    return user, claims


async def signed_in_user(signed_in: Annotated[tuple[User, AccessClaims], Depends(current_claims)]) -> User:
    return signed_in[0]


def route_path(request: Request) -> str:
    """The path template of the route that serves ``request`` (``/api/v1/konnects/{konnect_id}/update_status``);
    the URL's path only where no route was matched yet (the hot reads, whose paths have no parameters)."""
    path = getattr(request.scope.get("route"), "path", None)
    return path if isinstance(path, str) else request.url.path


async def account_at(
    signed_in: tuple[User, AccessClaims], session: Session, request: Request, level: str | None, *, note: str = ""
) -> User:
    """The account a call acts on. For a team member: their access level checked against ``level``
    (None: the level of the route's meaning, :func:`konnectz_api.crud.members.required_level`) and
    audited, with ``note`` (what the parsed body asked) in the audit entry."""
    user = signed_in[0]
    if user.member_kind != members.TEAM:
        return user
    return await run_in_threadpool(_team_account, session, user, request, level, note)


async def current_user(
    signed_in: Annotated[tuple[User, AccessClaims], Depends(current_claims)],
    session: SessionDep,
    request: Request,
) -> User:
    return await account_at(signed_in, session, request, None)


class AccountAt:
    """A dependency: the account of the call, for a route whose access level depends on its parsed
    body. ``level_of`` reads the level from the validated body model (FastAPI parses the body once and
    gives the same value to the route): ``Depends(AccountAt(UpdateStatusIn, lambda b: ...))`` with the
    route's own body parameter named ``body``."""

    def __init__(self, body_model: type[Any], level_of: Callable[[Any], str], note_of: Callable[[Any], str]) -> None:
        self.level_of = level_of
        self.note_of = note_of
        self.__signature__ = _account_at_signature(body_model)

    async def __call__(
        self, signed_in: tuple[User, AccessClaims], session: Session, request: Request, body: Any
    ) -> User:
        return await account_at(signed_in, session, request, self.level_of(body), note=self.note_of(body))


def _account_at_signature(body_model: type[Any]) -> inspect.Signature:
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature(
        [
            inspect.Parameter(
                "signed_in", kind, annotation=Annotated[tuple[User, AccessClaims], Depends(current_claims)]
            ),
            inspect.Parameter("session", kind, annotation=SessionDep),
            inspect.Parameter("request", kind, annotation=Request),
            inspect.Parameter("body", kind, annotation=body_model),
        ],
        return_annotation=User,
    )


def _team_account(session: Session, user: User, request: Request, level: str | None, note: str = "") -> User:
    """The account a team member works in, after checking (and auditing) their access level."""
    account = session.get(User, user.parent_id) if user.parent_id is not None else None
    if account is None:
        raise Unauthorized("Your session has expired. Please sign in again.")
    if level is None:
        level = members.required_level(request.method, route_path(request))
    allowed = members.allows(user.access, level)
    if level != members.READ:
        members.audit(
            session,
            account_id=account.id,
            actor=user,
            action=f"{request.method} {request.url.path}" + (f" {note}" if note else ""),
            outcome="allowed" if allowed else "denied",
            address=request.client.host if request.client else None,
        )
    if not allowed:
        raise Forbidden(members.denied_message(user.access, level), key="ACCESS_DENIED")
    return account


CurrentUser = Annotated[User, Depends(current_user)]
SignedInUser = Annotated[User, Depends(signed_in_user)]
CurrentClaims = Annotated[tuple[User, AccessClaims], Depends(current_claims)]


async def get_bus(request: Request) -> Bus:
    bus: Bus = request.app.state.bus
    return bus


async def get_deployer(request: Request) -> Deployer:
    deployer: Deployer = request.app.state.deployer
    return deployer


BusDep = Annotated[Bus, Depends(get_bus)]
DeployerDep = Annotated[Deployer, Depends(get_deployer)]


T = TypeVar("T")
_EXPIRED = "Your session has expired. Please sign in again."


class ReadScope:
    """A read route's queries on the async read pool, the first with the sign-in check in the same
    round trip.

    ``run(query, **kwargs)`` takes a connection of the pool and calls ``query(conn, owner_id=…,
    **kwargs)`` (a function of :mod:`konnectz_api.crud.reads`). On the first call the sign-in check
    (the user row, its session version and the revocation of the token's ``jti``) and the query are sent together in a
    pipeline, with the owner the signed token names; the rows are returned only once the check
    passed (otherwise 401 and the rows are dropped). A team member reads the account they were added
    to: their access level is checked (and audited) through ``_team_account`` and the query is sent
    again for that account. Later calls of the route use the checked account directly.
    """

    __slots__ = ("_claims", "_owner_id", "_pool", "_request")

    def __init__(self, pool: AsyncConnectionPool, claims: AccessClaims, request: Request) -> None:
        self._pool = pool
        self._claims = claims
        self._request = request
        self._owner_id: int | None = None

    @property
    def owner_id(self) -> int:
        """The checked account (after the first ``run``)."""
        if self._owner_id is None:
            raise RuntimeError("ReadScope.run() checks the session first")
        return self._owner_id

    async def run(self, query: Callable[..., Awaitable[T]], /, **kwargs: Any) -> T:
        try:
            return await self._run(query, **kwargs)
        except psycopg.OperationalError:
            # A connection the database closed (it restarted): the pool's idle connections are checked
            # (broken ones replaced) and the read runs once more; a second failure is the caller's 503.
            await self._pool.check()
            return await self._run(query, **kwargs)

    async def _run(self, query: Callable[..., Awaitable[T]], /, **kwargs: Any) -> T:
        async with self._pool.connection() as conn:
            if self._owner_id is not None:
                return await query(conn, owner_id=self._owner_id, **kwargs)
            claims = self._claims
            async with conn.pipeline():
                check = await reads.send_session_check(conn, user_id=claims.user_id, jti=claims.jti)
                result = await query(conn, owner_id=claims.user_id, **kwargs)
                row = await reads.session_row_of(check)
            if row is None or row.revoked or row.session_version != claims.session_version:
                raise Unauthorized(_EXPIRED)
            if row.member_kind != members.TEAM:
                self._owner_id = claims.user_id
                return result
            self._owner_id = await run_in_threadpool(_team_account_id, claims, self._request)
            return await query(conn, owner_id=self._owner_id, **kwargs)


async def read_scope(
    request: Request,
    settings: SettingsDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> ReadScope:
    """The sign-in check of ``current_claims`` + ``current_user`` for GET routes, on the read pool.

    The same rules, still checked in the database on every call (a logout or password change takes
    effect on the next request in every process): the token's signature and expiry here, then in
    :meth:`ReadScope.run` its ``jti`` not revoked and its session version the user's. A team
    member's call goes through ``_team_account`` (access level, audit) as every other route does.
    """
    if creds is None:
        raise Unauthorized("Sign in to continue")
    claims = decode_access_claims(creds.credentials, secret=settings.secret_key)
    if claims is None or not 0 < claims.user_id < 2**63:
        raise Unauthorized(_EXPIRED)
    return ReadScope(request.app.state.read_pool, claims, request)


def _team_account_id(claims: AccessClaims, request: Request) -> int:
    with get_sessionmaker()() as session:
        user = sessions.signed_in(session, claims=claims)
        if user is None:
            raise Unauthorized(_EXPIRED)
        return _team_account(session, user, request, None).id


Reader = Annotated[ReadScope, Depends(read_scope)]
