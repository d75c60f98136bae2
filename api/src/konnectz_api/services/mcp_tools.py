"""The tools of an MCP server, for the editor: listed through the caller's "MCP Server" account.

:func:`account_tools` reads the account (the caller's own, of the MCP Server app), its credentials, and
lists the server's tools with the runner's MCP client (:mod:`konnectz_runner.apps.mcp_client`) through the
outbound guard, within :data:`LIST_TIMEOUT_SECONDS` and :data:`~konnectz_contracts.limits.MCP_LIST_MAX_BYTES`.
Each tool's input JSON Schema becomes the editor's fields (:func:`tool_fields`): the MCP tool step's
arguments, ``arg.<name>`` (:data:`konnectz_contracts.steps.mcp_tool.ARG_PREFIX`). Failures are
:class:`ApiError` s whose status and message say why (400 refused here, 404 no such account, 502 the
server failed or refused, 504 it did not answer in time).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from konnectz_api.catalogue import AppIndex
from konnectz_api.core.config import Settings
from konnectz_api.crud import app_accounts
from konnectz_api.db import run_db
from konnectz_api.errors import ApiError, BadRequest, NotFound
from konnectz_api.models import User
from konnectz_api.schemas import EventConfigOut, McpFieldOut, McpToolList, McpToolOut, OptionOut
from konnectz_api.services.app_calls import MCP_APP_KEY, AppCallError, app_client, list_mcp_tools
from konnectz_api.services.credential_broker import fresh_credentials
from konnectz_contracts.steps.mcp_tool import ARG_PREFIX

__all__ = ["LIST_TIMEOUT_SECONDS", "account_tools", "argument_fields", "tool_fields", "tool_options"]

#: Listing a server's tools for the editor: connecting, the handshake and every page, at most this long.
LIST_TIMEOUT_SECONDS = 15.0
#: Editor fields of one tool (its arguments) at most.
MAX_FIELDS = 100


class _Upstream(ApiError):
    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


def _label(tool: Any) -> str:
    first = (tool.title or tool.description or "").strip().splitlines()
    return f"{tool.name} — {first[0][:120]}" if first and first[0] else tool.name


def tool_fields(schema: dict[str, Any]) -> list[McpFieldOut]:
    from konnectz_runner.apps import mcp_client  # import-ok: the MCP SDK's import (0.4 s), when listing

    return [McpFieldOut(**f) for f in mcp_client.schema_fields(schema, MAX_FIELDS)]


async def account_tools(
    session: Session, settings: Settings, index: AppIndex, user: User, account_id: int | None
) -> McpToolList:
    """The tools of the server of ``user``'s MCP Server account ``account_id``."""
    if account_id is None:
        raise BadRequest("Choose an MCP Server account first")
    account = await run_db(session, app_accounts.get_account, owner_id=user.id, account_id=account_id)
    app = index.get(account.app_id) if account is not None else None
    if account is None or app is None or app.key != MCP_APP_KEY:
        raise NotFound("MCP Server account not found")
    timeout = min(LIST_TIMEOUT_SECONDS, settings.outbound_timeout_seconds)
    try:
        async with app_client(settings) as (http, guard):
            credentials = await fresh_credentials(
                session, http=http, guard=guard, settings=settings, account=account, app=app
            )
            server, tools = await list_mcp_tools(guard, credentials, timeout=timeout)
    except AppCallError as exc:
        raise _Upstream(str(exc), exc.http_status) from None
    return McpToolList(
        server=server,
        tools=[
            McpToolOut(
                name=t.name,
                label=_label(t),
                description=t.description,
                input_schema=t.input_schema,
                fields=tool_fields(t.input_schema),
            )
            for t in tools
        ],
    )


def tool_options(listed: McpToolList) -> list[OptionOut]:
    """The tool field's options (the generic card's select)."""
    return [OptionOut(id=t.name, name=t.label) for t in listed.tools]


def argument_fields(listed: McpToolList, tool: str) -> list[EventConfigOut]:
    """The chosen tool's arguments as the generic card's fetched fields (``arg.<name>``); none for a tool
    the server does not list."""
    found = next((t for t in listed.tools if t.name == tool), None)
    if found is None:
        return []
    fields = []
    for f in found.fields:
        options = [OptionOut(id=o, name=o) for o in f.options]
        fields.append(
            EventConfigOut(
                id=ARG_PREFIX + f.name,
                config_key=ARG_PREFIX + f.name,
                title=f.label,
                label=f.label,
                key_value_type=f.type,
                type="select" if options else "text",
                config_key_required=f.required,
                sequence=0,
                help=f.help,
                options=options,
            )
        )
    return fields
