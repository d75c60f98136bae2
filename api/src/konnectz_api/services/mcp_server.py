"""The MCP server: an account's flows as tools for AI assistants and agents (docs/mcp.md).

``POST /mcp`` speaks the Model Context Protocol's Streamable HTTP transport, stateless: each request
is one JSON-RPC message, answered with one JSON reply (``application/json``; the server opens no
event stream, so ``GET /mcp`` answers 405 as the transport allows). No session is kept: every
request carries its bearer token (:mod:`konnectz_api.crud.mcp_tokens`), so any api replica answers.

Methods: ``initialize`` (protocol versions :data:`PROTOCOL_VERSIONS`, the newest the client asks
for), ``ping``, ``tools/list`` and ``tools/call``; notifications are accepted (202) and ignored;
anything else is ``-32601``. JSON-RPC batches are refused (the transport dropped them in 2025-06-18).

A tool is a flow named by the token that is published with the *Called by a flow or AI tool* trigger
offering itself as an MCP tool. ``tools/call``:

1. a flow the token does not name: HTTP 403 (whatever the flow, so nothing is learnt of others);
2. named but not a tool now (not published, not offered, another trigger): ``-32602`` saying why;
3. arguments checked against the trigger's inputs; bad ones are a tool error (``isError``) naming
   each field, so the model can correct itself; no run starts;
4. the run is stored in JetStream (``KZ_RUNS``, source ``call``) like a webhook's, and the call
   waits for its task log, at most :data:`CALL_TIMEOUT_SECONDS`; the result is the body of the flow's
   first Respond step that answered (JSON parsed; docs/sub-flows.md), else the run's last step's
   output (``structuredContent`` when it is an object; as JSON text always), ``isError`` when the run
   did not succeed. Past the wait the result says the run goes on and where to see it.

At most :data:`CALLS_PER_ACCOUNT` calls of one account wait at once in one api process; one more
is refused with HTTP 429. The run is a task log like any run (its source ``call``).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from konnectz_api.bus import Bus
from konnectz_api.crud import mcp_tokens, task_logs, task_payloads
from konnectz_api.models import Konnect, McpToken, User
from konnectz_api.services.flow_calls import trigger_of
from konnectz_contracts.events import RunRequest
from konnectz_contracts.triggers.flow_call import (
    FlowCallTrigger,
    check_arguments,
    input_schema,
    konnect_of_tool,
    tool_name,
)
from konnectz_runner.bus import publish_run

__all__ = [
    "CALLS_PER_ACCOUNT",
    "CALL_TIMEOUT_SECONDS",
    "PROTOCOL_VERSIONS",
    "McpReply",
    "Tool",
    "handle",
]

#: The protocol versions spoken, newest first (the Streamable HTTP transport's).
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
CALL_TIMEOUT_SECONDS = 30.0
CALLS_PER_ACCOUNT = 8
_POLL_FIRST, _POLL_MAX = 0.05, 0.5
_SERVER_INFO = {"name": "konnectz", "title": "Konnectz flows", "version": "1"}
_INSTRUCTIONS = (
    "Each tool runs a Konnectz flow with the given inputs and answers with its Respond step's body, or else "
    "its last step's output. "
    "Every call is a run of the flow, shown in its task log."
)
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602

_waiting: dict[int, int] = {}


@dataclass(frozen=True)
class McpReply:
    """What the route sends: an HTTP status and a JSON body (None: no body, 202)."""

    status: int
    body: dict[str, Any] | None


@dataclass(frozen=True)
class Tool:
    konnect_id: int
    name: str
    trigger: FlowCallTrigger

    def listed(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.trigger.description, "inputSchema": input_schema(self.trigger)}


def _result(message_id: Any, result: dict[str, Any]) -> McpReply:
    return McpReply(200, {"jsonrpc": "2.0", "id": message_id, "result": result})


def _error(message_id: Any, code: int, message: str, status: int = 200) -> McpReply:
    return McpReply(status, {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": message}})


def tools_of(session: Session, token: McpToken) -> list[Tool]:
    """The tools ``token`` reaches now: its flows published as MCP tools."""
    ids = [k for k in token.konnect_ids if isinstance(k, int)]
    rows = session.scalars(
        select(Konnect).where(Konnect.owner_id == token.owner_id, Konnect.id.in_(ids)).order_by(Konnect.id)
    )
    tools = []
    for konnect in rows:
        trigger = trigger_of(konnect)
        if trigger is not None and trigger.mcp:
            tools.append(Tool(konnect.id, tool_name(konnect.id, konnect.konnect_name), trigger))
    return tools


def _unavailable(session: Session, token: McpToken, konnect_id: int) -> str:
    konnect = session.scalar(select(Konnect).where(Konnect.id == konnect_id, Konnect.owner_id == token.owner_id))
    if konnect is None:
        return f"flow {konnect_id} no longer exists"
    trigger = trigger_of(konnect)
    if konnect.status != "Published":
        return f"flow {konnect_id} is not published"
    if trigger is None:
        return f"flow {konnect_id} does not start with the 'Called by a flow or AI tool' trigger"
    return f"flow {konnect_id} is not offered as an MCP tool (its trigger's 'Offer as an MCP tool' is off)"


def _respond_steps(session: Session, konnect_id: int) -> set[str]:
    """The ids of the flow's Respond steps (their body is a called run's result)."""
    konnect = session.get(Konnect, konnect_id)
    spec = konnect.published_spec if konnect is not None and isinstance(konnect.published_spec, dict) else {}
    steps = spec.get("steps")
    return (
        {str(s.get("id")) for s in steps if isinstance(s, dict) and s.get("kind") == "respond"}
        if isinstance(steps, list)
        else set()
    )


def _outcome(session: Session, owner_id: int, konnect_id: int, run_id: str) -> tuple[str, Any, str | None] | None:
    """(status, result, error) of the finished run, or None while it runs. The result is the first
    Respond step's body when one answered (docs/sub-flows.md), else the last step's output."""
    log = task_logs.by_run(session, owner_id=owner_id, konnect_id=konnect_id, run_id=run_id)
    if log is None:
        return None
    tasks = task_logs.tasks_of(session, task_log=log)
    if not tasks:
        return log.status, None, None
    responds = _respond_steps(session, konnect_id)
    for task in tasks:
        if task.step_id in responds and task.status == "SUCCESS":
            found = task.data if isinstance(task.data, dict) else {}
            found = task_payloads.restore(session, [(log.id, task.position, found)])[0]
            output = found.get("output") if isinstance(found, dict) else None
            if isinstance(output, dict) and "result" in output:
                return log.status, output["result"], None
    last = tasks[-1]
    data = last.data if isinstance(last.data, dict) else {}
    data = task_payloads.restore(session, [(log.id, last.position, data)])[0]
    data = data if isinstance(data, dict) else {}
    return log.status, data.get("output"), data.get("error")


def _call_result(run_id: str, outcome: tuple[str, Any, str | None] | None, wait_seconds: float) -> dict[str, Any]:
    meta = {"konnectz/run_id": run_id}
    if outcome is None:
        text = (
            f"The flow's run {run_id} did not finish within {wait_seconds:g} s; it goes on, and its task log "
            "will show the outcome."
        )
        return {"content": [{"type": "text", "text": text}], "isError": True, "_meta": meta}
    status, output, error = outcome
    if status != "SUCCESS":
        text = f"The flow's run {run_id} ended {status}" + (f": {error}" if error else "")
        meta["konnectz/status"] = status
        return {"content": [{"type": "text", "text": text}], "isError": True, "_meta": meta}
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": json.dumps(output, ensure_ascii=False, default=str)}],
        "isError": False,
        "_meta": {**meta, "konnectz/status": status},
    }
    if isinstance(output, dict):
        result["structuredContent"] = output
    return result


async def _await_outcome(
    sessions: sessionmaker[Session], owner_id: int, konnect_id: int, run_id: str, wait_seconds: float
) -> tuple[str, Any, str | None] | None:
    """Poll the task log of ``run_id`` (in the thread pool), backing off, up to ``wait_seconds``."""

    def read() -> tuple[str, Any, str | None] | None:
        with sessions() as session:
            return _outcome(session, owner_id, konnect_id, run_id)

    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_seconds
    pause = _POLL_FIRST
    while True:
        found = await asyncio.to_thread(read)
        if found is not None:
            return found
        left = deadline - loop.time()
        if left <= 0:
            return None
        await asyncio.sleep(min(pause, left))
        pause = min(pause * 2, _POLL_MAX)


async def _call(
    message_id: Any,
    params: dict[str, Any],
    token: McpToken,
    account: User,
    sessions: sessionmaker[Session],
    bus: Bus,
    wait_seconds: float,
) -> McpReply:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return _error(message_id, INVALID_PARAMS, "tools/call needs a tool name and an object of arguments")
    konnect_id = konnect_of_tool(name)
    if konnect_id is None or konnect_id not in token.konnect_ids:
        return _error(message_id, INVALID_PARAMS, f"This token does not reach the tool {name!r}", status=403)

    def find() -> tuple[Tool | None, str]:
        with sessions() as session:
            tool = next((t for t in tools_of(session, token) if t.konnect_id == konnect_id), None)
            return tool, ("" if tool is not None else _unavailable(session, token, konnect_id))

    tool, why = await asyncio.to_thread(find)
    if tool is None:
        return _error(message_id, INVALID_PARAMS, f"The tool {name!r} is not available: {why}")
    values, errors = check_arguments(tool.trigger, arguments)
    if errors:
        text = "The arguments were refused; no run started. " + "; ".join(f"{k}: {v}" for k, v in errors.items())
        return _result(message_id, {"content": [{"type": "text", "text": text}], "isError": True})
    if _waiting.get(account.id, 0) >= CALLS_PER_ACCOUNT:
        return _error(
            message_id,
            INVALID_REQUEST,
            f"At most {CALLS_PER_ACCOUNT} tool calls of an account run at once; try again when one has ended",
            status=429,
        )
    _waiting[account.id] = _waiting.get(account.id, 0) + 1
    try:
        run = RunRequest(
            run_id=uuid.uuid4().hex,
            konnect_id=konnect_id,
            trigger_output=values,
            received_at=datetime.now(UTC),
            source="call",
        )
        try:
            await publish_run(bus.js, run)
        except Exception as exc:  # NATS down or slow: nothing stored, the client may retry
            return _error(message_id, INVALID_REQUEST, f"The run could not be stored, try again: {exc!s}", status=503)
        outcome = await _await_outcome(sessions, account.id, konnect_id, run.run_id, wait_seconds)
        return _result(message_id, _call_result(run.run_id, outcome, wait_seconds))
    finally:
        left = _waiting.get(account.id, 1) - 1
        if left > 0:
            _waiting[account.id] = left
        else:
            _waiting.pop(account.id, None)


async def handle(
    message: Any,
    token: McpToken,
    account: User,
    sessions: sessionmaker[Session],
    bus: Bus,
    *,
    wait_seconds: float = CALL_TIMEOUT_SECONDS,
) -> McpReply:
    """The reply to one JSON-RPC ``message`` from a client holding ``token``."""
    if isinstance(message, list):
        return _error(None, INVALID_REQUEST, "JSON-RPC batches are not supported: send one message per request", 400)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return _error(None, INVALID_REQUEST, "Not a JSON-RPC 2.0 request", 400)
    method: str = message["method"]
    if "id" not in message:  # a notification (initialized, cancelled, ...): accepted, nothing to answer
        return McpReply(202, None)
    message_id = message["id"]
    params = message.get("params") or {}
    if not isinstance(params, dict):
        return _error(message_id, INVALID_PARAMS, "params must be an object")
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return _result(
            message_id,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": _SERVER_INFO,
                "instructions": _INSTRUCTIONS,
            },
        )
    if method == "ping":
        return _result(message_id, {})
    if method == "tools/list":

        def listed() -> list[Tool]:
            with sessions() as session:
                return tools_of(session, token)

        return _result(message_id, {"tools": [t.listed() for t in await asyncio.to_thread(listed)]})
    if method == "tools/call":
        return await _call(message_id, params, token, account, sessions, bus, wait_seconds)
    return _error(message_id, METHOD_NOT_FOUND, f"Method not supported: {method}")


def authenticate(sessions: sessionmaker[Session], token: str) -> tuple[McpToken, User] | None:
    """The token's row and account (blocking: call it in the thread pool)."""
    with sessions() as session:
        found = mcp_tokens.authenticate(session, token)
        if found is not None:
            session.expunge_all()
        return found
