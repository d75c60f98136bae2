import ipaddress
import socket
from typing import Any

import httpx
import pytest

from konnectz_contracts.errors import RefusedError, StepError
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.bus import outbound_transport

TRANSPORTS = pytest.mark.parametrize("kind", ["httpx", "aiohttp"])

REFUSED_BY_DEFAULT = [
    "http://127.0.0.1/",
    "http://127.8.9.10:8080/x",
    "http://localhost/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata (link-local)
    "http://100.100.100.200/",  # shared address space, also a metadata address
    "http://0.0.0.0/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://[::1]/",
    "http://[::]/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[ff02::1]/",
    "http://[::ffff:127.0.0.1]/",  # IPv4-mapped loopback
    "http://[::ffff:10.0.0.1]/",
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[2002:a9fe:a9fe::]/",  # 6to4 of 169.254.169.254
    "http://[64:ff9b::a00:1]/",  # NAT64 of 10.0.0.1
]


@pytest.mark.parametrize("url", REFUSED_BY_DEFAULT)
async def test_private_addresses_are_refused(url: str) -> None:
    with pytest.raises(RefusedError) as info:
        await NetGuard().check_url(url)
    message = str(info.value)
    assert message.startswith("Refused to call ")
    assert "is a private address (set KONNECTZ_ALLOW_PRIVATE_NETWORKS to allow it)" in message


async def test_refusal_message_names_host_and_address() -> None:
    with pytest.raises(RefusedError) as info:
        await NetGuard().check_url("http://localhost:9/")
    assert str(info.value) in {
        "Refused to call localhost: 127.0.0.1 is a private address (set KONNECTZ_ALLOW_PRIVATE_NETWORKS to allow it)",
        "Refused to call localhost: ::1 is a private address (set KONNECTZ_ALLOW_PRIVATE_NETWORKS to allow it)",
    }


@pytest.mark.parametrize("url", ["http://8.8.8.8/", "https://1.1.1.1:8443/x?y=1", "http://[2606:4700::1111]/"])
async def test_public_addresses_are_allowed(url: str) -> None:
    parsed = await NetGuard().check_url(url)
    assert str(parsed) == url


@pytest.mark.parametrize(
    "url", ["ftp://example.com/", "file:///etc/passwd", "gopher://127.0.0.1/", "javascript:alert(1)"]
)
async def test_only_http_and_https(url: str) -> None:
    with pytest.raises(RefusedError, match="only http and https"):
        await NetGuard(parse_networks("0.0.0.0/0")).check_url(url)


async def test_url_without_host_is_refused() -> None:
    with pytest.raises(RefusedError):
        await NetGuard().check_url("http:///path")


async def test_allowlist_allows_only_its_networks() -> None:
    guard = NetGuard(parse_networks("127.0.0.0/8, fd00::/8"))
    await guard.check_url("http://127.0.0.1:1234/")
    await guard.check_url("http://[fd00::5]/")
    await guard.check_url("http://[::ffff:127.0.0.1]/")  # the mapped address is inside 127.0.0.0/8
    with pytest.raises(RefusedError, match=r"10\.0\.0\.1"):
        await guard.check_url("http://10.0.0.1/")
    with pytest.raises(RefusedError, match="::1"):
        await guard.check_url("http://[::1]/")


def test_parse_networks() -> None:
    assert parse_networks("") == []
    assert parse_networks(" 127.0.0.0/8 ,10.0.0.5") == [
        ipaddress.ip_network("127.0.0.0/8"),
        ipaddress.ip_network("10.0.0.5/32"),
    ]
    with pytest.raises(ValueError):
        parse_networks("not-a-network")


async def test_refused_if_any_resolved_address_is_private(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        assert host == "mixed.example"
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    with pytest.raises(RefusedError, match=r"Refused to call mixed\.example: 10\.0\.0\.7 is a private address"):
        await NetGuard().check_url("https://mixed.example/")


async def test_public_name_with_only_public_addresses_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2606:2800:220:1::1", port, 0, 0)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    await NetGuard().check_url("https://public.example/")


async def test_unresolvable_host_is_a_step_error() -> None:
    with pytest.raises(StepError, match="Could not resolve host"):
        await NetGuard().check_url("http://does-not-exist.invalid/")


def test_is_refused_unit() -> None:
    guard = NetGuard([ipaddress.ip_network("192.168.5.0/24")])
    assert guard.is_refused(ipaddress.ip_address("192.168.4.1"))
    assert not guard.is_refused(ipaddress.ip_address("192.168.5.1"))
    assert not guard.is_refused(ipaddress.ip_address("::ffff:192.168.5.1"))
    assert not guard.is_refused(ipaddress.ip_address("9.9.9.9"))
    assert not guard.is_refused(ipaddress.ip_address("64:ff9b::909:909"))  # NAT64 of a public address


@TRANSPORTS
async def test_guarded_transport_checks_again_at_connect_time(
    monkeypatch: pytest.MonkeyPatch, echo: Any, kind: str
) -> None:
    """DNS rebinding: the name is public when checked, loopback when connecting; the connection is refused."""
    real_getaddrinfo = socket.getaddrinfo
    answers = iter(["93.184.216.34", "127.0.0.1"])

    def rebinding(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "rebind.test":
            return real_getaddrinfo(host, port, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    guard = NetGuard()
    url = f"http://rebind.test:{echo.port}/echo"
    await guard.check_url(url)  # first answer: public
    async with httpx.AsyncClient(transport=outbound_transport(guard, kind)) as client:
        with pytest.raises(RefusedError, match=r"Refused to call rebind\.test: 127\.0\.0\.1 is a private address"):
            await client.get(url)
    assert echo.received == []


@TRANSPORTS
async def test_guarded_transport_connects_to_allowed_addresses(echo: Any, kind: str) -> None:
    guard = NetGuard(parse_networks("127.0.0.0/8"))
    async with httpx.AsyncClient(transport=outbound_transport(guard, kind)) as client:
        reply = await client.get(f"http://localhost:{echo.port}/echo")
    assert reply.status_code == 200
    assert [r.path for r in echo.received] == ["/echo"]


@TRANSPORTS
async def test_guarded_transport_refuses_private_without_allowlist(echo: Any, kind: str) -> None:
    async with httpx.AsyncClient(transport=outbound_transport(NetGuard(), kind)) as client:
        with pytest.raises(RefusedError):
            await client.get(f"{echo.base}/echo")
    assert echo.received == []
