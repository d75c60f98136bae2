"""A redirect to another origin drops every secret header; task logs never show them."""

from __future__ import annotations

import httpx
import pytest

from konnectz_contracts.model import KeyValue
from konnectz_contracts.steps.api_call import ApiCallStep
from konnectz_runner.apps import NetGuard, outbound, parse_networks
from konnectz_runner.apps.outbound import REDACTED, is_secret_header, recorded_headers
from konnectz_runner.engine import StepContext
from konnectz_runner.engine.steps import api_call

LOCAL = NetGuard(parse_networks("127.0.0.0/8"))
SECRETS = {
    "Authorization": "Bearer a",
    "Proxy-Authorization": "Basic b",
    "Cookie": "sid=c",
    "X-Api-Key": "d",
    "Api-Key": "e",
    "X-Auth-Token": "f",
    "X-Client-Secret": "g",
    "X-Access-Key": "h",
    "X-Marked": "i",  # marked secret by the user
}
PLAIN = {"X-Trace": "t-1", "Accept": "application/json"}


async def follow(location: str) -> list[httpx.Request]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) == 1:
            return httpx.Response(307, headers={"Location": location})
        return httpx.Response(200, json={"ok": True})

    headers = [KeyValue(key=k, value=v, secret=k == "X-Marked") for k, v in {**SECRETS, **PLAIN}.items()]
    step = ApiCallStep(id="node-2", name="Call", method="GET", url="http://127.0.0.1:8001/start", headers=headers)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        outcome = await api_call.run(step, StepContext(outputs={}, http=client, guard=LOCAL))
    assert outcome.status == "SUCCESS", outcome.error
    assert outcome.input["headers"] == {**dict.fromkeys(SECRETS, REDACTED), **PLAIN}
    return seen


@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.2:8001/next",  # another host
        "http://127.0.0.1:8002/next",  # another port
        "https://127.0.0.1:8001/next",  # another scheme
    ],
)
async def test_cross_origin_redirect_drops_every_secret_header(location: str) -> None:
    first, second = await follow(location)
    for name in SECRETS:
        assert first.headers[name] == SECRETS[name]
        assert name not in second.headers, name
    for name, value in PLAIN.items():
        assert second.headers[name] == value
    assert str(second.url) == location


async def test_same_origin_redirect_keeps_them() -> None:
    _first, second = await follow("/next")
    for name, value in SECRETS.items():
        assert second.headers[name] == value


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("Authorization", True), ("cookie", True), ("X-API-KEY", True), ("X-Upstream-Token", True),
        ("Client-Secret", True), ("X-Auth-User", True), ("Accept", False), ("X-Request-Id", False),
        ("Content-Type", False),
    ],
)  # fmt: skip
def test_secret_header_names(name: str, secret: bool) -> None:
    assert is_secret_header(name) is secret


def test_marked_headers_are_redacted_case_insensitively() -> None:
    assert recorded_headers({"X-Custom": "v", "X-Other": "w"}, ["x-custom"]) == {"X-Custom": REDACTED, "X-Other": "w"}


async def test_secret_params_are_redacted_in_the_log_but_sent() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    step = ApiCallStep(
        id="node-2",
        name="Call",
        method="GET",
        url="http://127.0.0.1:8001/q",
        params=[KeyValue(key="api_token", value="s3cret", secret=True), KeyValue(key="page", value="2")],
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        outcome = await api_call.run(step, StepContext(outputs={}, http=client, guard=LOCAL))
    assert outcome.input["params"] == {"api_token": REDACTED, "page": "2"}
    assert seen[0].url.params["api_token"] == "s3cret"


async def test_the_shared_step_client_keeps_no_cookies() -> None:
    """One client serves every flow: a cookie one API sets must not ride along on the next request."""
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("cookie"))
        return httpx.Response(200, headers={"Set-Cookie": "session=owner-a-secret; Path=/"}, json={})

    async with outbound.step_client(httpx.MockTransport(handler), timeout=5, user_agent="t") as client:
        for _ in range(2):
            request = client.build_request("GET", "http://127.0.0.1:9/x")
            response, _raw = await outbound.send(client, LOCAL, request, 1024)
            assert response.status_code == 200
        assert seen == [None, None] and not list(client.cookies.jar)
