"""Calls from the api to catalogue apps: account test requests, live options, OAuth2 token requests.

Every call goes through the runner's outbound guard (private addresses refused unless
``KONNECTZ_ALLOW_PRIVATE_NETWORKS`` lists them) and reads at most 2 MB. Credentials never
appear in an error message: values of secret credentials are masked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx

from konnectz_api.core.config import Settings
from konnectz_contracts.errors import StepError
from konnectz_runner.apps import (
    ERROR_BODY_CHARS,
    AppRequest,
    NetGuard,
    guarded_transport,
    hook_error,
    parse_body,
    send_outbound,
)

__all__ = ["AppCallError", "Reply", "app_client", "call_app", "mask"]

MAX_REPLY_BYTES = 2 * 1024 * 1024


class AppCallError(Exception):
    """An app refused a request or could not be reached; the message is safe to show."""

    def __init__(self, message: str, *, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class Reply:
    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body


def mask(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


@asynccontextmanager
async def app_client(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, NetGuard]]:
    guard = NetGuard(settings.allow_private_networks)
    transport = guarded_transport(guard)
    async with httpx.AsyncClient(transport=transport, timeout=settings.outbound_timeout_seconds) as http:
        yield http, guard


async def call_app(
    http: httpx.AsyncClient,
    guard: NetGuard,
    request: AppRequest,
    *,
    secrets: list[str],
    hooks: Sequence[str] = (),
    raise_for_status: bool = True,
) -> Reply:
    """Send one app request; a 4xx/5xx (or an ``ok: false`` hook) raises :class:`AppCallError`."""
    try:
        built = request.to_httpx(http)
        response, raw = await send_outbound(http, guard, built, MAX_REPLY_BYTES, secret_headers=request.secret_headers)
    except (StepError, httpx.HTTPError, ValueError) as exc:
        raise AppCallError(mask(f"Could not reach the app: {exc}", secrets)) from exc
    body = parse_body(response, raw)
    if raise_for_status and response.status_code >= 400:
        snippet = raw.decode(response.encoding or "utf-8", errors="replace")[:ERROR_BODY_CHARS]
        raise AppCallError(
            mask(f"The app answered HTTP {response.status_code}: {snippet}", secrets),
            status=response.status_code,
            body=body,
        )
    problem = hook_error(hooks, body)
    if raise_for_status and problem:
        raise AppCallError(mask(problem, secrets), status=response.status_code, body=body)
    return Reply(response.status_code, body)
