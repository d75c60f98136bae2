"""A local MCP server made with the official MCP Python SDK (``MCPServer``, Streamable HTTP), for the tests of
the MCP tool step and the MCP client (``docs/mcp.md``).

Its tools:

- ``add(a: int, b: int = 1) -> int``: the sum (structured output ``{"result": a + b}``);
- ``weather(city: str, days: int = 1, unit: "C" | "F" = "C", tags: list[str] | None) -> dict``: a forecast
  object (structured output), echoing what it was given;
- ``fail(reason: str)``: raises the SDK's ``ToolError``: a tool error (``isError``) whose text is the reason;
- ``slow(seconds: float)``: sleeps, then answers (a server that hangs, for the bounds);
- ``big(kib: int)``: a text of ``kib`` KiB (a reply over a limit);
- ``deep(levels: int)``: an object nested ``levels`` deep.

With ``token``, a request without ``Authorization: Bearer <token>`` gets 401; every request's headers are
kept in :attr:`McpToolServer.headers`; :attr:`McpToolServer.hang` set, every request waits 120 s first.
``stateless``/``json_response`` choose the transport's modes (the defaults: a session and event streams,
the SDK's own defaults).

    with McpToolServer(token="s3cret") as server:
        server.url   # http://127.0.0.1:<port>/mcp
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any, Literal

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

__all__ = ["McpToolServer", "build_server"]


def build_server() -> MCPServer:
    server = MCPServer("konnectz-test-tools")

    @server.tool()
    def add(a: int, b: int = 1) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def weather(
        city: str, days: int = 1, unit: Literal["C", "F"] = "C", tags: list[str] | None = None
    ) -> dict[str, Any]:
        """The forecast of a city for some days."""
        return {"city": city, "days": days, "unit": unit, "tags": tags or [], "forecast": ["sunny"] * days}

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails, with the reason given."""
        raise ToolError(f"Refused: {reason}")

    @server.tool()
    async def slow(seconds: float) -> str:
        """Answers after some seconds."""
        await asyncio.sleep(seconds)
        return "done"

    @server.tool()
    def deep(levels: int) -> dict[str, Any]:
        """An object nested ``levels`` deep."""
        value: dict[str, Any] = {}
        for _ in range(levels):
            value = {"in": value}
        return value

    @server.tool()
    def big(kib: int) -> str:
        """A long text."""
        return "x" * (kib * 1024)

    return server


class McpToolServer:
    """:func:`build_server` served on 127.0.0.1 by uvicorn in a thread."""

    def __init__(self, *, token: str | None = None, stateless: bool = False, json_response: bool = False) -> None:
        self.token = token
        self.hang = False
        self.headers: list[dict[str, str]] = []
        inner = build_server().streamable_http_app(stateless_http=stateless, json_response=json_response)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._sock = sock
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._server = uvicorn.Server(
            uvicorn.Config(self._guarded(inner), log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
        )
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)

    def _guarded(self, inner: Any) -> Any:
        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
                self.headers.append(headers)
                if self.hang:
                    await asyncio.sleep(120)
                if self.token is not None and headers.get("authorization") != f"Bearer {self.token}":
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 401,
                            "headers": [(b"content-type", b"application/json")],
                        }
                    )
                    await send({"type": "http.response.body", "body": b'{"error": "invalid_token"}'})
                    return
            await inner(scope, receive, send)

        return app

    def __enter__(self) -> McpToolServer:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the MCP test server did not start within 20 s")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.hang = False
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()
