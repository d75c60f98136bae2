"""A small HTTP/1.1 keep-alive load generator for the api bench.

httpx spends about a millisecond of CPU per request, which on a 2-core machine shared with the
api and PostgreSQL measured the client rather than the server. This one writes each GET on a kept
connection and reads the reply by its Content-Length: a few microseconds of Python per request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from urllib.parse import urlsplit


class _Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    async def get(self, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
        lines = [f"GET {path} HTTP/1.1", f"Host: {self.host}", *(f"{k}: {v}" for k, v in headers.items())]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        chunked = False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if not chunked:
            return status, await self.reader.readexactly(length)
        body = b""
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
            body += await self.reader.readexactly(size + 2)
            if size == 0:
                return status, body

    def close(self) -> None:
        self.writer.close()


async def drive(
    url: str,
    request_for: Callable[[], tuple[str, dict[str, str]]],
    *,
    requests: int,
    concurrency: int,
    check: Callable[[int, bytes], None],
) -> tuple[list[float], float]:
    """Send ``requests`` GETs over ``concurrency`` kept connections; (latencies in ms, seconds taken)."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    conns = [_Conn(*(await asyncio.open_connection(host, port)), f"{host}:{port}") for _ in range(concurrency)]
    for conn in conns:  # warm-up: one round per connection
        await conn.get("/healthz", {})
    latencies: list[float] = []
    remaining = requests

    async def worker(conn: _Conn) -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            path, headers = request_for()
            t = time.perf_counter()
            status, body = await conn.get(path, headers)
            latencies.append((time.perf_counter() - t) * 1000)
            check(status, body)

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(c) for c in conns))
    finally:
        for conn in conns:
            conn.close()
    return latencies, time.perf_counter() - started
