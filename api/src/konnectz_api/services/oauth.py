"""OAuth2 authorization code grant with PKCE (RFC 6749, RFC 7636), for apps whose auth is oauth2.

- :func:`authorize_url` builds the provider's consent URL with a signed ``state`` (a JWT naming
  a nonce; the nonce's PKCE verifier and redirect URL wait in ``oauth_states``).
- :func:`exchange_code` trades the code (and verifier) for tokens; :func:`refresh` renews them.
Client ids and secrets come from ``KONNECTZ_OAUTH_CLIENTS`` and are never sent to the browser
except the client id inside the consent URL.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
import jwt

from konnectz_api.services.app_calls import AppCallError, call_app
from konnectz_contracts.manifest import App, OAuth2
from konnectz_runner.apps import AppRequest, NetGuard, dig

__all__ = ["OAuthClient", "authorize_url", "exchange_code", "new_pkce", "read_state", "refresh", "sign_state"]

STATE_AUDIENCE = "konnectz-oauth-state"


class OAuthClient:
    def __init__(self, client_id: str, client_secret: str) -> None:
        self.client_id = client_id
        self.client_secret = client_secret


def new_pkce() -> tuple[str, str]:
    """A code verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def sign_state(*, nonce: str, app_id: int, user_id: int, secret: str, ttl: timedelta) -> str:
    claims = {"n": nonce, "a": app_id, "u": user_id, "aud": STATE_AUDIENCE, "exp": datetime.now(UTC) + ttl}
    return jwt.encode(claims, secret, algorithm="HS256")


def read_state(state: str, *, secret: str) -> dict[str, Any] | None:
    try:
        claims = jwt.decode(state, secret, algorithms=["HS256"], audience=STATE_AUDIENCE)
    except jwt.PyJWTError:
        return None
    return claims if isinstance(claims.get("n"), str) else None


def authorize_url(app: App, client: OAuthClient, *, redirect_url: str, state: str, challenge: str) -> str:
    oauth = _oauth(app)
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_url,
        "state": state,
        **oauth.extra_authorize_params,
    }
    if oauth.scopes:
        params[oauth.scope_param] = oauth.scope_separator.join(oauth.scopes)
    if oauth.pkce:
        params |= {"code_challenge": challenge, "code_challenge_method": "S256"}
    separator = "&" if "?" in oauth.authorization_url else "?"
    return oauth.authorization_url + separator + urlencode(params)


def _oauth(app: App) -> OAuth2:
    if app.auth.oauth2 is None:
        raise AppCallError(f"{app.name} does not use OAuth2")
    return app.auth.oauth2


async def _token_request(
    http: httpx.AsyncClient, guard: NetGuard, app: App, client: OAuthClient, url: str, form: dict[str, str]
) -> tuple[dict[str, Any], datetime | None]:
    oauth = _oauth(app)
    body_form = dict(form)
    request = AppRequest(method="POST", url=url, headers={"Accept": "application/json"}, form_body=body_form)
    if oauth.client_auth == "basic":
        pair = f"{client.client_id}:{client.client_secret}".encode()
        request.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        request.secret_headers.append("Authorization")
    else:
        body_form |= {"client_id": client.client_id, "client_secret": client.client_secret}
    secrets_ = [client.client_secret, *form.values()]
    reply = await call_app(http, guard, request, secrets=secrets_)
    body = dig(reply.body, oauth.token_path) if oauth.token_path else reply.body
    if not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
        raise AppCallError(f"{app.name} did not return an access token")
    tokens = {k: v for k, v in body.items() if k in ("access_token", "refresh_token", "token_type", "instance_url")}
    expires_in = body.get("expires_in")
    expires_at = None
    if isinstance(expires_in, int | float | str) and str(expires_in).isdigit():
        expires_at = datetime.now(UTC) + timedelta(seconds=int(expires_in))
    return tokens, expires_at


async def exchange_code(
    http: httpx.AsyncClient,
    guard: NetGuard,
    app: App,
    client: OAuthClient,
    *,
    code: str,
    verifier: str,
    redirect_url: str,
) -> tuple[dict[str, Any], datetime | None]:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_url}
    if _oauth(app).pkce:
        form["code_verifier"] = verifier
    return await _token_request(http, guard, app, client, _oauth(app).token_url, form)


async def refresh(
    http: httpx.AsyncClient, guard: NetGuard, app: App, client: OAuthClient, *, credentials: dict[str, Any]
) -> tuple[dict[str, Any], datetime | None]:
    """New tokens for an account; a provider that does not rotate the refresh token keeps the old one."""
    token = credentials.get("refresh_token")
    if not isinstance(token, str) or not token:
        raise AppCallError(f"The {app.name} account cannot be refreshed: authorise it again")
    oauth = _oauth(app)
    tokens, expires_at = await _token_request(
        http,
        guard,
        app,
        client,
        oauth.refresh_url or oauth.token_url,
        {"grant_type": "refresh_token", "refresh_token": token},
    )
    return {**credentials, **tokens, "refresh_token": tokens.get("refresh_token") or token}, expires_at
