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
from konnectz_contracts.errors import ConnectFailed, HttpFailed, RefusedError, StepError, TimedOut
from konnectz_runner.apps import (
    ERROR_BODY_CHARS,
    AppRequest,
    NetGuard,
    guarded_transport,
    hook_error,
    parse_body,
    send_outbound,
)

__all__ = ["MCP_APP_KEY", "AppCallError", "Reply", "app_client", "call_app", "list_mcp_tools", "mask"]

MAX_REPLY_BYTES = 2 * 1024 * 1024
#: The in-house app of MCP servers (``catalogue/apps/mcp_server.yaml``): its accounts are checked, and its
#: tools listed, with an MCP client instead of an HTTP request.
MCP_APP_KEY = "mcp_server"


class AppCallError(Exception):
    """An app refused a request or could not be reached; the message is safe to show. ``http_status``: the
    status the api answers with when the route does not choose one (400: refused here; 502: the other side
    failed; 504: it did not answer in time)."""

    def __init__(self, message: str, *, status: int | None = None, body: Any = None, http_status: int = 400) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.http_status = http_status


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


async def list_mcp_tools(
    guard: NetGuard,
    credentials: dict[str, Any],
    *,
    timeout: float,  # noqa: ASYNC109 (the MCP client's bound, handshake included: a 504 saying so)
) -> tuple[str, list[Any]]:
    """The URL (without its query) and the tools of the MCP server of an "MCP Server" account's ``credentials``
    (:func:`konnectz_runner.apps.mcp_client.list_tools`: through ``guard``, at most ``timeout`` seconds and
    :data:`~konnectz_contracts.limits.MCP_LIST_MAX_BYTES`). :class:`AppCallError` saying why not: 400 when the
    URL or the account is refused here (a private address not allowed, not http(s)), 502 when the server
    could not be reached or answered an error (its HTTP status named), 504 when it did not answer in time."""
    from konnectz_runner.apps import mcp_client as mcp  # import-ok: the MCP SDK's import (0.4 s), when listing

    try:
        server = mcp.McpServer.of(credentials)
        tools = await mcp.list_tools(server, guard, timeout=timeout)
    except RefusedError as exc:
        raise AppCallError(str(exc), http_status=400) from None
    except TimedOut as exc:
        raise AppCallError(str(exc), http_status=504) from None
    except HttpFailed as exc:
        raise AppCallError(str(exc), status=exc.status, http_status=502) from None
    except (ConnectFailed, mcp.McpProtocolError, mcp.McpReplyTooLarge) as exc:
        raise AppCallError(str(exc), http_status=502) from None
    except StepError as exc:  # the account's fields (no URL, a header that may not be set)
        raise AppCallError(str(exc), http_status=400) from None
    return server.url.split("?", 1)[0], tools
