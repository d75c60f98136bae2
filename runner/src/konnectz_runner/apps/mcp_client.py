"""An MCP client: list and call the tools of an MCP server, through the outbound guard, bounded.

What the MCP tool step runs (``konnectz_runner.engine.steps.mcp_tool``), what the api lists tools with for
the editor (``konnectz_api.services.mcp_tools``), and a tool source for an agent. It is the official MCP
Python SDK's client (``mcp.Client``) over Streamable HTTP, with an ``httpx2`` client built here:

- every connection goes through the :class:`~konnectz_runner.apps.netguard.NetGuard` (the URL is checked
  first, with a clear :class:`~konnectz_contracts.errors.RefusedError`; then each TCP connection resolves
  and checks the host again, so a name that rebinds to a private address is refused too). The SDK follows
  a redirect only within the server's origin; the guard checks that connection as well;
- every HTTP response body (a JSON reply, or one POST's event stream) is cut at ``max_bytes``: past it the
  call fails (:class:`McpReplyTooLarge`);
- every call is bounded in time as a whole (connect, handshake, the request and its reply): past
  ``timeout`` seconds it is a :class:`~konnectz_contracts.errors.TimedOut`;
- no cookies, no environment proxies (``trust_env=False``: a proxy would make the connection, not us).

The API (an agent uses it as a tool source the same way)::

    server = McpServer.of(credentials)                # an "MCP Server" account's fields
    tools = await list_tools(server, guard)           # [McpTool(name, title, description, input_schema)]
    result = await call_tool(server, guard, "add", {"a": 1, "b": 2}, timeout=30)
    result.is_error, result.output, result.text       # output: structuredContent, else the text parsed

    async with connect(server, guard, timeout=30) as session:   # several requests, one session
        tools = await session.list_tools()
        result = await session.call_tool("add", {"a": 1})

Failures are :class:`~konnectz_contracts.errors.StepError` subclasses whose message says what happened
and never carries a credential: :class:`~konnectz_contracts.errors.RefusedError` (the guard),
:class:`~konnectz_contracts.errors.ConnectFailed` (nothing was sent), :class:`~konnectz_contracts.errors.TimedOut`,
:class:`~konnectz_contracts.errors.HttpFailed` (the server answered an HTTP error: 401, 404...),
:class:`McpProtocolError` (not an MCP server, or a JSON-RPC error such as an unknown tool). A tool that
ran and failed is not an exception: ``result.is_error`` is true and ``result.text`` is the server's text.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpcore2
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation, TextContent

from konnectz_contracts.errors import ConnectFailed, HttpFailed, RefusedError, StepError, TimedOut
from konnectz_contracts.limits import MAX_JSON_DEPTH, MCP_LIST_MAX_BYTES, MCP_REPLY_MAX_BYTES, TooDeep, check_depth
from konnectz_runner.apps.netguard import NetGuard, connect_checked

__all__ = [
    "CALL_TIMEOUT_SECONDS",
    "LIST_TIMEOUT_SECONDS",
    "MAX_REPLY_BYTES",
    "MAX_TOOLS",
    "McpProtocolError",
    "McpReplyTooLarge",
    "McpResult",
    "McpServer",
    "McpSession",
    "McpTool",
    "call_tool",
    "connect",
    "list_tools",
    "result_output",
    "schema_fields",
    "typed_arguments",
]

#: The default bound of one tool call (the step's timeout may be from 1 to 300 s).
CALL_TIMEOUT_SECONDS = 30.0
#: The bound of listing a server's tools (connect, handshake and every page).
LIST_TIMEOUT_SECONDS = 15.0
#: The largest HTTP response body accepted from an MCP server (a reply, or one request's event stream) by
#: default: a tool's reply; :func:`list_tools` takes :data:`~konnectz_contracts.limits.MCP_LIST_MAX_BYTES`.
MAX_REPLY_BYTES = MCP_REPLY_MAX_BYTES
#: The most tools read from one server (pages of ``tools/list`` are followed up to this many tools).
MAX_TOOLS = 500
MAX_PAGES = 20
#: A custom header's name: an HTTP token (RFC 9110), not one the transport sets itself.
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
_RESERVED_HEADERS = frozenset(
    {"host", "content-length", "content-type", "accept", "mcp-session-id", "mcp-protocol-version", "transfer-encoding"}
)
_CLIENT_INFO = Implementation(name="konnectz", version="1")


class McpProtocolError(StepError):
    """The server did not answer as an MCP server, or answered a JSON-RPC error (``code``)."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class McpReplyTooLarge(StepError):
    """A response body of the server was larger than the limit."""


@dataclass(frozen=True)
class McpServer:
    """Where a server is and how to authenticate: its URL, and the headers every request carries."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, credentials: dict[str, Any]) -> McpServer:
        """The server of an "MCP Server" account (``catalogue/apps/mcp_server.yaml``): ``instance_url``,
        ``api_key`` (a bearer token, optional), ``header_name``/``header_value`` (a custom header, optional).
        :class:`StepError` saying which field is wrong."""
        url = str(credentials.get("instance_url") or "").strip()
        if not url:
            raise StepError("The MCP server account has no server URL")
        headers: dict[str, str] = {}
        token = str(credentials.get("api_key") or "").strip()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        name = str(credentials.get("header_name") or "").strip()
        if name:
            if not _HEADER_NAME.match(name) or name.lower() in _RESERVED_HEADERS:
                raise StepError(f"The MCP server account's header name {name[:100]!r} is not a header one may set")
            value = str(credentials.get("header_value") or "")
            if any(c in value for c in "\r\n\x00"):
                raise StepError("The MCP server account's header value has a line break")
            headers[name] = value
        return cls(url=url, headers=headers)

    @property
    def secrets(self) -> list[str]:
        """The header values that must never appear in a message or a log."""
        values = [v for v in self.headers.values() if len(v) >= 4]
        return values + [v.removeprefix("Bearer ") for v in values if v.startswith("Bearer ")]


@dataclass
class McpTool:
    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]


@dataclass
class McpResult:
    """A tool's result: ``output`` is ``structuredContent`` when the server gave it, else the text content
    parsed as JSON (an object as it is; any other value as ``{"result": value}``), else ``{"text": ...}``.
    ``text`` joins the text content; ``content_types`` names every content block's type."""

    is_error: bool
    output: dict[str, Any]
    text: str
    content_types: list[str]


# --- the HTTP client: guarded connections, bounded bodies, the last error status -------------------------


class _GuardedBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's twin of :class:`~konnectz_runner.apps.netguard.GuardedNetworkBackend` (the SDK's
    ``httpx2`` sits on ``httpcore2``): resolves, checks every address, connects to one that passed."""

    def __init__(self, guard: NetGuard, inner: httpcore2.AsyncNetworkBackend) -> None:
        self.guard = guard
        self.inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (the httpcore2 interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        return await connect_checked(
            self.guard,
            self.inner.connect_tcp,
            host,
            port,
            (httpcore2.ConnectError, httpcore2.ConnectTimeout),
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (the httpcore2 interface)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise RefusedError(f"Refused to connect to the unix socket {path}")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class _LimitedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, limit: int, seen: _Seen) -> None:
        self.inner = inner
        self.limit = limit
        self.seen = seen

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self.inner:
            size += len(chunk)
            if size > self.limit:
                self.seen.too_large = True
                raise McpReplyTooLarge(f"The MCP server's reply is larger than {self.limit} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class _Seen:
    """What the transport saw that the SDK does not tell: an HTTP error status, a body too large, a
    refused or failed connection."""

    status: int | None = None
    too_large: bool = False
    failure: Exception | None = None


class _Transport(httpx2.AsyncBaseTransport):
    def __init__(self, guard: NetGuard, limit: int, seen: _Seen) -> None:
        self.inner = httpx2.AsyncHTTPTransport(trust_env=False)
        pool = getattr(self.inner, "_pool", None)
        if not isinstance(pool, httpcore2.AsyncConnectionPool) or not hasattr(pool, "_network_backend"):
            raise RuntimeError("Unsupported httpx2 version: cannot install the outbound guard on its transport")
        pool._network_backend = _GuardedBackend(guard, pool._network_backend)
        self.limit = limit
        self.seen = seen

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await self.inner.handle_async_request(request)
        except (RefusedError, StepError) as exc:
            self.seen.failure = exc
            raise
        except httpx2.TransportError as exc:
            self.seen.failure = exc
            raise
        if response.status_code >= 400 and request.method == "POST":
            self.seen.status = response.status_code
        response.stream = _LimitedStream(response.stream, self.limit, self.seen)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


# --- arguments: from text fields to the types of the input schema, and back --------------------------------

_TRUE = frozenset({"true", "yes", "1", "on"})
_FALSE = frozenset({"false", "no", "0", "off"})


def _types(prop: Any) -> list[str]:
    """The JSON types a property's schema allows (``type``, or the types of its ``anyOf``/``oneOf``)."""
    if not isinstance(prop, dict):
        return []
    kind = prop.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    found: list[str] = []
    for key in ("anyOf", "oneOf"):
        for option in prop.get(key) or ():
            found += [k for k in _types(option) if k not in found]
    return found


def _typed(name: str, value: str, types: list[str]) -> Any:
    kinds = [k for k in types if k != "null"]
    if not kinds or "string" in kinds:
        return value
    stripped = value.strip()
    for kind in kinds:
        if kind == "integer":
            if stripped.lstrip("+-").isdigit() and len(stripped) <= 30:
                return int(stripped)
        elif kind == "number":
            try:
                number = float(stripped)
            except ValueError:
                continue
            if number == number and number not in (float("inf"), float("-inf")):
                return int(number) if stripped.lstrip("+-").isdigit() else number
        elif kind == "boolean":
            if stripped.lower() in _TRUE | _FALSE:
                return stripped.lower() in _TRUE
        elif kind in ("object", "array"):
            try:
                parsed = json.loads(stripped)
            except ValueError:
                continue
            if isinstance(parsed, dict if kind == "object" else list):
                return parsed
    wanted = {"integer": "a whole number", "number": "a number", "boolean": "true or false"}
    said = " or ".join(wanted.get(k, f"a JSON {k}") for k in kinds)
    raise StepError(f"The argument {name!r} must be {said} (it is {value[:100]!r})")


def typed_arguments(values: dict[str, str], schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments typed in text fields (references resolved), converted to the types ``schema`` (a tool's
    input schema) gives each: an empty value is left out; a number, an integer, true/false (also yes/no,
    1/0), a JSON object or array are parsed; a value that is not what its type says is a :class:`StepError`
    naming the argument. An argument the schema does not name is passed as text."""
    raw = schema.get("properties")
    properties: dict[str, Any] = raw if isinstance(raw, dict) else {}
    typed: dict[str, Any] = {}
    for name, value in values.items():
        if value == "":
            continue
        typed[name] = _typed(name, value, _types(properties.get(name)))
    return typed


def schema_fields(schema: dict[str, Any], max_fields: int = 100) -> list[dict[str, Any]]:
    """The editor's fields of a tool's input schema, one per property (at most ``max_fields``): ``name``,
    ``label`` (its title, else its name), ``type`` (the JSON type: string, integer, number, boolean, object,
    array), ``required``, ``help`` (its description, and for objects and arrays "as JSON"), ``options``
    (its ``enum``'s values)."""
    raw, raw_required = schema.get("properties"), schema.get("required")
    properties: dict[str, Any] = raw if isinstance(raw, dict) else {}
    required: list[Any] = raw_required if isinstance(raw_required, list) else []
    fields: list[dict[str, Any]] = []
    for name, prop in list(properties.items())[:max_fields]:
        prop = prop if isinstance(prop, dict) else {}
        kinds = [k for k in _types(prop) if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else "string"
        help_text = str(prop.get("description") or "")[:500]
        if kind in ("object", "array"):
            help_text = (help_text + " " if help_text else "") + f"(a JSON {kind})"
        raw_enum = prop.get("enum")
        enum: list[Any] = raw_enum if isinstance(raw_enum, list) else []
        fields.append(
            {
                "name": str(name),
                "label": str(prop.get("title") or name)[:200],
                "type": kind,
                "required": name in required,
                "help": help_text,
                "options": [json.dumps(v) if not isinstance(v, str) else v for v in enum[:200]],
            }
        )
    return fields


# --- sessions ---------------------------------------------------------------------------------------------


def _schema(tool: Any) -> dict[str, Any]:
    """A tool's input schema; a plain object's when it has none, or one nested deeper than
    :data:`~konnectz_contracts.limits.MAX_JSON_DEPTH` levels (its arguments are then not listed)."""
    schema = getattr(tool, "input_schema", None)
    if not isinstance(schema, dict):
        return {"type": "object"}
    try:
        check_depth(schema, MAX_JSON_DEPTH)
    except TooDeep:
        return {
            "type": "object",
            "description": f"(the server's input schema is nested deeper than {MAX_JSON_DEPTH} levels)",
        }
    return schema


def result_output(structured: Any, texts: list[str]) -> dict[str, Any]:
    """A tool result's output (see :class:`McpResult`)."""
    if isinstance(structured, dict):
        return structured
    if structured is not None:
        return {"result": structured}
    text = "\n".join(texts)
    try:
        parsed = json.loads(text) if text.strip() else None
    except ValueError:
        return {"text": text}
    if isinstance(parsed, dict):
        return parsed
    return {"result": parsed} if parsed is not None else {"text": text}


class McpSession:
    """One connected server (see :func:`connect`)."""

    def __init__(self, client: Client, server: McpServer, seen: _Seen) -> None:
        self._client = client
        self._server = server
        self._seen = seen

    async def list_tools(self, max_tools: int = MAX_TOOLS) -> list[McpTool]:
        """Every tool of the server (following ``nextCursor``), at most ``max_tools``."""
        tools: list[McpTool] = []
        cursor: str | None = None
        for _page in range(MAX_PAGES):
            listed = await self._client.list_tools(cursor=cursor)
            for tool in listed.tools:
                tools.append(
                    McpTool(
                        name=tool.name,
                        title=getattr(tool, "title", None),
                        description=(tool.description or "")[:2000],
                        input_schema=_schema(tool),
                    )
                )
                if len(tools) >= max_tools:
                    return tools
            cursor = listed.next_cursor
            if not cursor:
                break
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> McpResult:
        result = await self._client.call_tool(name, arguments)
        texts = [block.text for block in result.content if isinstance(block, TextContent)]
        output = result_output(result.structured_content, texts)
        try:
            check_depth(output, MAX_JSON_DEPTH)
        except TooDeep:
            raise McpProtocolError(f"The tool's result is nested deeper than {MAX_JSON_DEPTH} levels") from None
        return McpResult(
            is_error=bool(result.is_error),
            output=output,
            text="\n".join(texts),
            content_types=[str(getattr(block, "type", "?")) for block in result.content],
        )


def _masked(text: str, server: McpServer) -> str:
    for secret in server.secrets:
        text = text.replace(secret, "***")
    return text


def _failure(exc: BaseException, server: McpServer, seen: _Seen, display: str) -> StepError:
    """What an SDK or transport failure means, as a :class:`StepError` saying so."""
    if isinstance(exc, StepError):
        return exc
    if seen.too_large:
        return McpReplyTooLarge(f"The reply of the MCP server {display} is larger than the limit")
    if isinstance(seen.failure, StepError):
        return seen.failure
    if isinstance(seen.failure, httpx2.TimeoutException):
        return TimedOut(f"Timed out calling the MCP server {display}")
    if isinstance(seen.failure, httpx2.ConnectError | httpx2.ConnectTimeout):
        return ConnectFailed(f"Could not connect to the MCP server {display}: {seen.failure or 'connection failed'}")
    if isinstance(seen.failure, httpx2.TransportError):
        return StepError(f"Could not call the MCP server {display}: {seen.failure or type(seen.failure).__name__}")
    if seen.status is not None:
        hint = {401: " (check the account's token)", 403: " (the token may not reach it)", 404: " (check the URL)"}
        return HttpFailed(
            f"The MCP server {display} answered HTTP {seen.status}{hint.get(seen.status, '')}",
            seen.status,
        )
    if isinstance(exc, MCPError):
        return McpProtocolError(f"The MCP server {display} answered an error: {_masked(str(exc), server)}", exc.code)
    return McpProtocolError(
        f"The MCP server {display} could not be used ({type(exc).__name__}: {_masked(str(exc), server)[:300]})"
    )


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception of an exception group (anyio's task groups raise groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


@asynccontextmanager
async def connect(
    server: McpServer,
    guard: NetGuard,
    *,
    timeout: float = CALL_TIMEOUT_SECONDS,  # noqa: ASYNC109 (bounds the handshake too; said as a TimedOut)
    max_bytes: int = MAX_REPLY_BYTES,
) -> AsyncIterator[McpSession]:
    """A session with ``server`` (the handshake done), every request through the guard; the whole block is
    bounded by ``timeout`` seconds. Failures are :class:`StepError` (see the module)."""
    parsed = NetGuard.parse_url(server.url)
    display = str(parsed.copy_with(query=None, fragment=None, username=None, password=None))
    await guard.check_url(parsed)
    seen = _Seen()
    http = httpx2.AsyncClient(
        transport=_Transport(guard, max_bytes, seen),
        headers=server.headers,
        timeout=httpx2.Timeout(timeout),
        follow_redirects=False,
        trust_env=False,
    )
    client = Client(
        streamable_http_client(str(parsed), http_client=http, terminate_on_close=True),
        read_timeout_seconds=timeout,
        client_info=_CLIENT_INFO,
        cache=None,
    )
    failure: StepError | None = None
    try:
        with anyio.fail_after(timeout):
            async with http, client:
                try:
                    yield McpSession(client, server, seen)
                except Exception as exc:  # the caller's requests: the SDK's errors, said plainly
                    raise _failure(exc, server, seen, display) from None
    except TimeoutError:
        failure = TimedOut(f"The MCP server {display} did not answer within {timeout:g} s")
    except StepError:
        raise
    except Exception as exc:  # connecting, the handshake: the SDK's and the transport's errors
        failure = _failure(_leaf(exc), server, seen, display)
    if failure is not None:
        raise failure


async def list_tools(
    server: McpServer,
    guard: NetGuard,
    *,
    timeout: float = LIST_TIMEOUT_SECONDS,  # noqa: ASYNC109 (see connect)
    max_bytes: int = MCP_LIST_MAX_BYTES,
) -> list[McpTool]:
    """The server's tools (at most :data:`MAX_TOOLS`), in ``timeout`` seconds at most."""
    async with connect(server, guard, timeout=timeout, max_bytes=max_bytes) as session:
        return await session.list_tools()


async def call_tool(
    server: McpServer,
    guard: NetGuard,
    name: str,
    arguments: dict[str, Any],
    *,
    timeout: float = CALL_TIMEOUT_SECONDS,  # noqa: ASYNC109 (see connect)
    max_bytes: int = MAX_REPLY_BYTES,
) -> McpResult:
    """Call one tool, in ``timeout`` seconds at most. A tool error is ``result.is_error``, not an exception."""
    async with connect(server, guard, timeout=timeout, max_bytes=max_bytes) as session:
        return await session.call_tool(name, arguments)
