"""The credential broker's door for runners: a fresh credential of an account, for one konnect.

A runner hosting konnect K holds a token scoped to K (:func:`konnectz_contracts.broker_token.konnect_token`,
an HMAC of K and the UID of K's Konnect resource under the credentials key ``KONNECTZ_CREDENTIALS_KEY``):
a runner of one konnect gets the token (``KONNECTZ_CREDENTIALS_TOKEN``, from a Secret the operator
renders), a runner hosting many konnects gets the key, both with ``KONNECTZ_CREDENTIALS_URL``. The
expected token is computed from the UID recorded on K's row (``konnects.resource_uid``: the resource
the api created or imported; empty with the local deployer), so a token minted for a copy of the
resource under another name, or for another konnect, is refused. It may read only accounts
that K's owner owns and that K's canvas selects; OAuth2 tokens are refreshed here first when
they expire (or when the runner saw an expired reply and asks with ``refresh``).
"""

from __future__ import annotations

import hmac
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from sqlalchemy import or_, type_coerce
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session

from konnectz_api import step_secrets
from konnectz_api.catalogue import AppIndex, get_index
from konnectz_api.core.config import Settings
from konnectz_api.crud import app_accounts
from konnectz_api.db import run_db
from konnectz_api.deps import SessionDep, SettingsDep
from konnectz_api.errors import BadRequest, Forbidden, NotFound, Unauthorized
from konnectz_api.models import AppAccount, Konnect
from konnectz_api.services.app_calls import AppCallError, app_client
from konnectz_api.services.app_webhooks import secret_of
from konnectz_api.services.credential_broker import cipher, fresh_credentials, refresh_credentials
from konnectz_contracts.broker_token import konnect_token

router = APIRouter(prefix="/api/v1/internal", tags=["internal"])
_bearer = HTTPBearer(auto_error=False)
# The runner's bearer: a konnect's scoped token, checked by each route against the konnect it names.
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


class CredentialsIn(BaseModel):
    account_id: int = Field(ge=1, lt=2**63)
    konnect_id: int = Field(ge=1, lt=2**63)
    refresh: bool = False


class CredentialsOut(BaseModel):
    credentials: dict[str, Any]
    # rate budgets: the owner's override of the app's rate (None: the app's own), and the account's
    # name for the task log's wait line (konnectz_runner.apps.budgets).
    rate_limit_rps: float | None = None
    account_name: str | None = None


def _require_konnect_token(
    session: Session, settings: Settings, creds: HTTPAuthorizationCredentials | None, konnect_id: int
) -> Konnect | None:
    """Konnect ``konnect_id`` (None when there is none), for a bearer holding its scoped token: 401
    unless the bearer is the token of that konnect and of the Konnect resource recorded for it
    (compared in constant time)."""
    konnect = session.get(Konnect, konnect_id)
    uid = (konnect.resource_uid if konnect is not None else None) or ""
    expected = konnect_token(settings.runner_credentials_key, konnect_id, uid)
    if creds is None or not hmac.compare_digest(creds.credentials, expected):
        raise Unauthorized(
            "A token scoped to this konnect and to its Konnect resource is required: a token of another "
            "konnect, or one minted for a copy of its resource, is refused"
        )
    return konnect


def _scoped_konnect(
    session: Session, settings: Settings, creds: HTTPAuthorizationCredentials | None, konnect_id: int
) -> Konnect:
    """Konnect ``konnect_id``, for a bearer holding its scoped token (401 otherwise; 404 when deleted)."""
    konnect = _require_konnect_token(session, settings, creds, konnect_id)
    if konnect is None or konnect.status == "DELETED":
        raise NotFound("Konnect not found")
    return konnect


def _scoped_post(path: str, reply: type[BaseModel], summary: str, description: str | None = None) -> Any:
    """A POST route the runner calls with a konnect's scoped token."""
    return router.post(path, response_model=reply, summary=summary, description=description)


@_scoped_post("/credentials", CredentialsOut, "A fresh credential for a runner (scoped token)")
async def credentials(
    body: CredentialsIn,
    session: SessionDep,
    settings: SettingsDep,
    index: Annotated[AppIndex, Depends(get_index)],
    creds: Bearer,
) -> CredentialsOut:
    account = await run_db(session, _used_account, settings, creds, body)  # the token is checked there
    app = index.get(account.app_id)
    if app is None:
        raise NotFound("The account's app is no longer in the catalogue")
    try:
        async with app_client(settings) as (http, guard):
            if body.refresh and app.auth.type == "oauth2":
                fresh = await refresh_credentials(
                    session, http=http, guard=guard, settings=settings, account=account, app=app
                )
            else:
                fresh = await fresh_credentials(
                    session, http=http, guard=guard, settings=settings, account=account, app=app
                )
    except AppCallError as exc:
        raise BadRequest(str(exc)) from exc
    return CredentialsOut(credentials=fresh, rate_limit_rps=account.rate_limit_rps, account_name=account.label)


def _used_account(
    session: Session, settings: Settings, creds: HTTPAuthorizationCredentials | None, body: CredentialsIn
) -> AppAccount:
    """The account, when the bearer's konnect uses it (403 otherwise)."""
    konnect = _scoped_konnect(session, settings, creds, body.konnect_id)
    account = app_accounts.get_account(session, owner_id=konnect.owner_id, account_id=body.account_id)
    shapes = app_accounts.account_shapes(body.account_id)
    uses = session.query(Konnect.id).filter(
        Konnect.id == konnect.id,
        or_(*(type_coerce(Konnect.canvas_json, JSONB).contains(shape) for shape in shapes)),
    )
    if account is None or uses.first() is None:
        raise Forbidden("This konnect does not use that account")
    return account


class WebhookSecretIn(BaseModel):
    konnect_id: int = Field(ge=1, lt=2**63)


class WebhookSecretOut(BaseModel):
    secret: str


@_scoped_post(
    "/webhook_secret",
    WebhookSecretOut,
    "The signing secret of a konnect's app webhook (scoped token)",
    "The runner of konnect K verifies the signature of each delivery to K's app webhook trigger "
    "with this secret (kept encrypted since the api subscribed K at the app). Bearer: K's scoped token. 404 "
    "when K has no app webhook subscription.",
)
def webhook_secret(
    body: WebhookSecretIn, session: SessionDep, settings: SettingsDep, creds: Bearer
) -> WebhookSecretOut:
    _require_konnect_token(session, settings, creds, body.konnect_id)
    secret = secret_of(session, settings, body.konnect_id)
    if not secret:
        raise NotFound("This konnect has no app webhook subscription")
    return WebhookSecretOut(secret=secret)


class StepSecretsIn(BaseModel):
    konnect_id: int = Field(ge=1, lt=2**63)
    sealed: list[Annotated[str, Field(min_length=1, max_length=8192)]] = Field(min_length=1, max_length=400)


class StepSecret(BaseModel):
    value: str
    origin: str | None = Field(description="scheme://host:port of the endpoint the value was typed for")


class StepSecretsOut(BaseModel):
    secrets: list[StepSecret]


@_scoped_post(
    "/step_secrets",
    StepSecretsOut,
    "The plain values of secrets typed into a konnect's steps (scoped token)",
    "The runner of konnect K opens the sealed header and param values of K's API Call steps "
    "(`KeyValue.sealed`, encrypted like app credentials) when a step runs. Bearer: K's scoped token. Only "
    "values sealed for K are opened (403 otherwise); the answer keeps the order of `sealed`.",
)
def step_secrets_route(
    body: StepSecretsIn, session: SessionDep, settings: SettingsDep, creds: Bearer
) -> StepSecretsOut:
    konnect = _scoped_konnect(session, settings, creds, body.konnect_id)
    box = cipher(settings)
    try:
        opened = [step_secrets.open_sealed(s, cipher=box, konnect_id=konnect.id) for s in body.sealed]
    except step_secrets.SealedError as exc:
        raise Forbidden(str(exc)) from exc
    return StepSecretsOut(secrets=[StepSecret(value=v, origin=o) for v, o in opened])
