"""``/mcp``: the MCP server (Streamable HTTP, stateless JSON replies) and the tokens that open it.

The protocol is :mod:`konnectz_api.services.mcp_server`; the tokens :mod:`konnectz_api.crud.mcp_tokens`.
Tokens are managed by a signed-in owner (or a team member, with the levels of any change) under
``/api/v1/mcp_tokens``. See docs/mcp.md.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from konnectz_api.crud import mcp_tokens
from konnectz_api.db import get_sessionmaker
from konnectz_api.deps import BusDep, CurrentUser, SessionDep, SettingsDep, SignedInUser
from konnectz_api.errors import NotFound, Unprocessable
from konnectz_api.models import McpToken
from konnectz_api.schemas import Message
from konnectz_api.services import mcp_server

__all__ = ["router", "tokens_router"]

router = APIRouter(tags=["mcp"])
tokens_router = APIRouter(prefix="/api/v1", tags=["mcp"])

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="konnectz-mcp"'}


def _refusal(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


@router.post(
    "/mcp",
    summary="The MCP server (Streamable HTTP): the account's flows offered as tools",
    description="One JSON-RPC message per request, answered with JSON. `Authorization: Bearer kzmcp_…` "
    "(an MCP token, made under /api/v1/mcp_tokens) is required: 401 without a valid one; 403 for a tool "
    "the token does not reach. See docs/mcp.md.",
    response_model=None,
    responses={
        202: {"description": "a notification, accepted"},
        400: {"description": "not JSON, not JSON-RPC 2.0, or a batch"},
        401: {"description": "no MCP token, or one that is unknown or revoked"},
        403: {"description": "a tool the token does not reach"},
        429: {"description": "too many tool calls of the account at once"},
    },
)
async def mcp_post(request: Request, bus: BusDep, settings: SettingsDep) -> Response:
    header = request.headers.get("authorization", "")
    scheme, _, credential = header.partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        return _refusal(401, "An MCP token is required: Authorization: Bearer kzmcp_…", _CHALLENGE)
    sessions = get_sessionmaker()
    found = await run_in_threadpool(mcp_server.authenticate, sessions, credential.strip())
    if found is None:
        return _refusal(401, "This MCP token is not valid (unknown or revoked)", _CHALLENGE)
    token, account = found
    try:
        message = json.loads(await request.body())
    except ValueError:
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": mcp_server.PARSE_ERROR, "message": "Not JSON"}}
        return JSONResponse(body, status_code=400)
    timeout = max(1.0, min(mcp_server.CALL_TIMEOUT_SECONDS, settings.request_deadline_seconds - 5))
    reply = await mcp_server.handle(message, token, account, sessions, bus, wait_seconds=timeout)
    if reply.body is None:
        return Response(status_code=reply.status)
    return JSONResponse(reply.body, status_code=reply.status)


@router.api_route("/mcp", methods=["GET", "DELETE"], include_in_schema=False, response_model=None)
async def mcp_other() -> Response:
    """No event stream and no session to end: the transport lets a server answer 405."""
    return Response(status_code=405, headers={"Allow": "POST"})


class McpTokenIn(BaseModel):
    name: str = Field(min_length=1, max_length=100, description="What the token is for (e.g. the assistant using it)")
    konnect_ids: list[Annotated[int, Field(gt=0, lt=2**63)]] = Field(
        min_length=1, max_length=mcp_tokens.MAX_FLOWS, description="The flows the token reaches"
    )


class McpTokenOut(BaseModel):
    id: int
    name: str
    prefix: str = Field(description="The token's first characters, to recognise it")
    konnect_ids: list[int]
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class McpTokenMade(McpTokenOut):
    token: str = Field(description="The token itself: shown this once, never again")
    mcp_url: str = Field(description="The MCP server's URL")


def _out(row: McpToken) -> McpTokenOut:
    return McpTokenOut(
        id=row.id,
        name=row.name,
        prefix=row.prefix,
        konnect_ids=list(row.konnect_ids),
        created_at=row.created_at,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
    )


@tokens_router.get("/mcp_tokens", response_model=list[McpTokenOut], summary="The account's MCP tokens")
def list_tokens(user: CurrentUser, session: SessionDep) -> list[McpTokenOut]:
    return [_out(row) for row in mcp_tokens.listed(session, account=user)]


@tokens_router.post(
    "/mcp_tokens",
    response_model=McpTokenMade,
    status_code=201,
    summary="Make an MCP token reaching chosen flows (the token is shown once)",
    responses={422: {"model": Message, "description": "a flow that is not the account's, or too many tokens"}},
)
def create_token(
    body: McpTokenIn, user: CurrentUser, actor: SignedInUser, session: SessionDep, settings: SettingsDep
) -> McpTokenMade:
    try:
        made = mcp_tokens.create(
            session, account=user, actor=actor, name=body.name.strip(), konnect_ids=body.konnect_ids
        )
    except mcp_tokens.McpTokenError as exc:
        raise Unprocessable(str(exc)) from exc
    return McpTokenMade(
        **_out(made.row).model_dump(), token=made.token, mcp_url=settings.public_url.rstrip("/") + "/mcp"
    )


@tokens_router.delete(
    "/mcp_tokens/{token_id}",
    response_model=McpTokenOut,
    summary="Revoke an MCP token: its next call answers 401",
    responses={404: {"model": Message, "description": "no such token in this account"}},
)
def revoke_token(token_id: Annotated[int, Path(gt=0, lt=2**63)], user: CurrentUser, session: SessionDep) -> McpTokenOut:
    row = mcp_tokens.revoke(session, account=user, token_id=token_id)
    if row is None:
        raise NotFound(f"No MCP token {token_id} in this account")
    return _out(row)
