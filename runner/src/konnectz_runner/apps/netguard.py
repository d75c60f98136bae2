"""The outbound guard: flows may call the public internet, not the machine's own networks.

Before every request (and every redirect hop) the engine asks :meth:`NetGuard.check_url`.
It allows only http and https, resolves the host, and refuses the call if *any* address
is loopback, private, link-local, multicast, reserved, unspecified or otherwise not global,
including IPv4 addresses carried inside IPv6 ones (IPv4-mapped, 6to4, Teredo, NAT64),
unless that address lies in one of the allowed networks (``KONNECTZ_ALLOW_PRIVATE_NETWORKS``).

A name can resolve differently a moment later (DNS rebinding), so the HTTP client the runner
uses is built with :func:`guarded_transport`: its connections resolve the host once more,
check every address again, and connect to exactly an address that passed.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from functools import lru_cache
from typing import Any, TypeVar

import httpcore
import httpx

from konnectz_contracts.errors import RefusedError, StepError

__all__ = [
    "GuardedNetworkBackend",
    "IPAddress",
    "IPNetwork",
    "NetGuard",
    "connect_checked",
    "guarded_transport",
    "ip_literal",
    "parse_networks",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

T = TypeVar("T")

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
ALLOWED_SCHEMES = ("http", "https")


def parse_networks(cidrs: str | Iterable[str]) -> list[IPNetwork]:
    """``"127.0.0.0/8, 10.0.0.0/8"`` (or a list of such strings) as networks; a bare IP is one host."""
    items = cidrs.split(",") if isinstance(cidrs, str) else cidrs
    return [ipaddress.ip_network(item.strip(), strict=False) for item in items if item.strip()]


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client's address
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


@lru_cache(maxsize=4096)
def ip_literal(host: str) -> IPAddress | None:
    """``host`` as an IP address when it is one (parsed once per distinct host), else None."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_public(ip: IPAddress) -> bool:
    return not (
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )


class NetGuard:
    """Decides which addresses flows may call. ``allow`` lists networks that are allowed even if private."""

    def __init__(self, allow: Iterable[IPNetwork] = ()) -> None:
        self.allow: tuple[IPNetwork, ...] = tuple(allow)
        # The verdict of each address seen (the allowed networks never change): ipaddress's
        # is_private/is_global walk lists of networks on every call.
        self._verdicts: dict[IPAddress, bool] = {}

    def _allowed(self, ip: IPAddress) -> bool:
        return any(ip.version == net.version and ip in net for net in self.allow)

    def is_refused(self, ip: IPAddress) -> bool:
        """True if calling ``ip`` must be refused."""
        verdict = self._verdicts.get(ip)
        if verdict is None:
            if len(self._verdicts) >= 4096:
                self._verdicts.clear()
            verdict = self._verdicts[ip] = self._judge(ip)
        return verdict

    def _judge(self, ip: IPAddress) -> bool:
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            # Judge the IPv4 address the packet really goes to (IPv4-mapped, 6to4, Teredo, NAT64).
            return not (self._allowed(ip) or self._allowed(embedded) or _is_public(embedded))
        return not (self._allowed(ip) or _is_public(ip))

    def check_ip(self, host: str, ip: IPAddress) -> None:
        if self.is_refused(ip):
            raise RefusedError(
                f"Refused to call {host}: {ip} is a private address (set KONNECTZ_ALLOW_PRIVATE_NETWORKS to allow it)"
            )

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """All addresses of ``host`` (getaddrinfo runs in a worker thread, the event loop stays free)."""
        literal = ip_literal(host)
        if literal is not None:
            return [literal]
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise StepError(f"Could not resolve host {host}: {exc}") from exc
        addresses: list[IPAddress] = []
        for _family, _type, _proto, _canon, sockaddr in infos:
            # IPv6 sockaddr may carry a zone (fe80::1%eth0): drop it before parsing.
            ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            if ip not in addresses:
                addresses.append(ip)
        if not addresses:
            raise StepError(f"Could not resolve host {host}: no addresses")
        return addresses

    @staticmethod
    def parse_url(url: str | httpx.URL) -> httpx.URL:
        """``url`` parsed, if it is an http(s) URL with a host, else :class:`RefusedError`. Its
        addresses are not checked: :meth:`check_url` does, before the request is sent."""
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise RefusedError(f"Refused to call {url}: invalid URL ({exc})") from exc
        if parsed.scheme not in ALLOWED_SCHEMES:
            raise RefusedError(f"Refused to call {url}: only http and https URLs are allowed")
        if not parsed.host:
            raise RefusedError(f"Refused to call {url}: the URL has no host")
        return parsed

    async def check_url(self, url: str | httpx.URL) -> httpx.URL:
        """Return the parsed URL if it may be called, else raise :class:`RefusedError`."""
        parsed = self.parse_url(url)
        host = parsed.host
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        for ip in await self.resolve(host, port):
            self.check_ip(host, ip)
        return parsed


async def connect_checked(
    guard: NetGuard,
    connect: Callable[..., Awaitable[T]],
    host: str,
    port: int,
    errors: tuple[type[Exception], ...],
    **options: Any,
) -> T:
    """Resolve ``host``, check every address with the guard (one refused: :class:`RefusedError`, nothing
    connected), then ``connect(ip, port, **options)`` to the first that answers; ``errors`` are the
    connect failures that move on to the next address (httpcore's and httpcore2's own classes)."""
    addresses = await guard.resolve(host, port)
    for ip in addresses:
        guard.check_ip(host, ip)
    failure: Exception | None = None
    for ip in addresses:
        try:
            return await connect(str(ip), port, **options)
        except errors as exc:
            failure = exc
    assert failure is not None
    raise failure


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """Opens TCP connections only to addresses the guard accepts, resolved and checked at connect time."""

    def __init__(self, guard: NetGuard, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.guard = guard
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (the httpcore interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return await connect_checked(
            self.guard,
            self.inner.connect_tcp,
            host,
            port,
            (httpcore.ConnectError, httpcore.ConnectTimeout),
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (the httpcore interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise RefusedError(f"Refused to connect to the unix socket {path}")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def guarded_transport(guard: NetGuard, **kwargs: object) -> httpx.AsyncHTTPTransport:
    """An httpx transport whose every connection goes through :class:`GuardedNetworkBackend`.

    httpx has no public parameter for the network backend, so it is set on the transport's
    connection pool; the checks below fail loudly if a future httpx changes that layout.
    Proxies are not supported here (a proxy would make the connection, not us).
    """
    if "proxy" in kwargs:
        raise ValueError("guarded_transport does not support proxies")
    transport = httpx.AsyncHTTPTransport(**kwargs)  # type: ignore[arg-type]
    pool = getattr(transport, "_pool", None)
    if not isinstance(pool, httpcore.AsyncConnectionPool) or not hasattr(pool, "_network_backend"):
        raise RuntimeError("Unsupported httpx version: cannot install the outbound guard on its transport")
    pool._network_backend = GuardedNetworkBackend(guard, pool._network_backend)
    return transport
