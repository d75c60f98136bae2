"""An httpx transport that sends with aiohttp: the steps keep httpx's API, the wire is cheaper.

Under load the API-call step spent about a third of the runner's CPU inside httpx's default
transport (httpcore): its connection pool scans every pooled connection on each request
(``has_expired`` → ``get_extra_info``), and its anyio streams add a layer per read and write.
aiohttp's connector and its C HTTP parser do the same work for a fraction of that. Everything
above the transport stays as it was — :mod:`konnectz_runner.apps.outbound` still checks every URL and
every redirect hop with the :class:`~konnectz_runner.apps.netguard.NetGuard`, follows redirects itself
(dropping secret headers on a cross-origin hop), caps response sizes and maps errors — because
this transport never follows redirects and never decompresses (httpx decodes, so the size cap
still counts decoded bytes).

The connect-time guard (DNS rebinding): a host name is resolved by :class:`GuardedResolver`, which
checks every address and hands the connector only addresses that passed; an IP literal (which
aiohttp does not resolve) is checked before the request. Timeouts are httpx's (``connect``,
``read``, ``pool``), and aiohttp's errors become the matching httpx exceptions, so callers cannot
tell the difference. Proxies are not supported (a proxy would make the connection, not us).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
from aiohttp.abc import AbstractResolver, ResolveResult
from multidict import CIMultiDict
from yarl import URL

from konnectz_runner.apps.netguard import NetGuard, ip_literal

__all__ = ["AiohttpTransport", "GuardedResolver"]


class GuardedResolver(AbstractResolver):
    """Resolves with the guard: every address is checked, only checked ones are connected to."""

    def __init__(self, guard: NetGuard) -> None:
        self.guard = guard

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addresses = await self.guard.resolve(host, port)
        for ip in addresses:
            self.guard.check_ip(host, ip)
        return [
            ResolveResult(
                hostname=host,
                host=str(ip),
                port=port,
                family=socket.AF_INET6 if ip.version == 6 else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for ip in addresses
        ]

    async def close(self) -> None:
        return None


class _Body(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.response.content.iter_any():
                yield chunk
        except (TimeoutError, aiohttp.SocketTimeoutError) as exc:
            raise httpx.ReadTimeout(str(exc) or "timed out reading the response") from exc
        except aiohttp.ClientError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        self.response.release()


def _seconds(timeouts: dict[str, Any], name: str) -> float | None:
    value = timeouts.get(name)
    return float(value) if value is not None else None


class AiohttpTransport(httpx.AsyncBaseTransport):
    """One aiohttp connection pool (created on first use, in the running loop) behind httpx."""

    def __init__(self, guard: NetGuard, *, max_connections: int = 100, keepalive_seconds: float = 15.0) -> None:
        self.guard = guard
        self.max_connections = max_connections
        self.keepalive_seconds = keepalive_seconds
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                resolver=GuardedResolver(self.guard),
                limit=self.max_connections,
                keepalive_timeout=self.keepalive_seconds,
                use_dns_cache=False,  # every connection resolves and checks again
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=False,  # httpx decodes (and the size cap counts decoded bytes)
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=None),
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        literal = ip_literal(host)  # None for a name: GuardedResolver checks what it resolves to
        if literal is not None:
            self.guard.check_ip(host, literal)
        if request.url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"Unsupported scheme {request.url.scheme!r}")
        timeouts: dict[str, Any] = request.extensions.get("timeout", {})
        connect = _seconds(timeouts, "connect")
        pool = _seconds(timeouts, "pool")
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=None if connect is None or pool is None else connect + pool,
            sock_connect=connect,
            sock_read=_seconds(timeouts, "read"),
        )
        headers = CIMultiDict((k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw)
        body = await request.aread()
        try:
            response = await self._client().request(
                request.method,
                URL(str(request.url), encoded=True),
                headers=headers,
                data=body or None,
                allow_redirects=False,
                timeout=timeout,
                compress=None,
                chunked=None,
            )
        except aiohttp.ConnectionTimeoutError as exc:
            raise httpx.ConnectTimeout(str(exc) or "timed out connecting") from exc
        except (aiohttp.SocketTimeoutError, TimeoutError) as exc:
            raise httpx.ReadTimeout(str(exc) or "timed out") from exc
        except aiohttp.ClientConnectorError as exc:
            cause = exc.os_error
            raise httpx.ConnectError(str(cause) or str(exc) or type(exc).__name__) from exc
        except aiohttp.ClientError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc
        return httpx.Response(
            status_code=response.status,
            headers=[(k, v) for k, v in response.raw_headers],
            stream=_Body(response),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": (response.reason or "").encode("latin-1")},
            request=request,
        )

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
            await asyncio.sleep(0)  # let the connector close its sockets
