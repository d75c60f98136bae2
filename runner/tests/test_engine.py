"""The engine against a real local HTTP server (see conftest.EchoServer)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from konnectz_contracts.events import RunRequest
from konnectz_contracts.spec import ApiCallStep, FlowSpec, KeyValue, WebhookTrigger
from konnectz_runner.apps import AiohttpTransport, NetGuard, outbound, parse_networks
from konnectz_runner.engine import StepContext, execute
from konnectz_runner.engine.steps import api_call

LOCAL = NetGuard(parse_networks("127.0.0.0/8"))
TOKEN = "t" * 32


def flow(*steps: ApiCallStep) -> FlowSpec:
    return FlowSpec(
        konnect_id=5,
        owner_id=9,
        name="Orders to CRM",
        trigger_id="node-1",
        trigger=WebhookTrigger(token=TOKEN),
        steps=list(steps),
    )


def run(trigger_output: dict[str, Any]) -> RunRequest:
    return RunRequest(run_id="r1", konnect_id=5, trigger_output=trigger_output, received_at=datetime.now(UTC))


@pytest.fixture(params=["httpx", "aiohttp"])
async def http(request: pytest.FixtureRequest) -> AsyncIterator[httpx.AsyncClient]:
    """Each test against a real server runs with httpx's own transport and with the runner's aiohttp one."""
    transport = AiohttpTransport(NetGuard(parse_networks("127.0.0.0/8"))) if request.param == "aiohttp" else None
    async with httpx.AsyncClient(timeout=5, transport=transport) as client:
        yield client


async def test_request_is_sent_as_configured_with_references(echo: Any, http: httpx.AsyncClient) -> None:
    step = ApiCallStep(
        id="node-2",
        name="Create contact",
        method="PUT",
        url=echo.base + "/echo?fixed=1",
        headers=[KeyValue(key="X-Customer", value="{{node-1.customer.name}}"),
                 KeyValue(key="Authorization", value="Bearer s3cret")],
        params=[KeyValue(key="email", value="{{node-1.customer.email}}"), KeyValue(key="page", value="2")],
        body=[
            KeyValue(key="contact.name", value="{{node-1.customer.name}}"),
            KeyValue(key="contact.age", value="{{ node-1.customer.age }}"),
            KeyValue(key="first_sku", value="{{node-1.items.0.sku}}"),
            KeyValue(key="note", value="Order {{node-1.order_id}} received"),
        ],
    )  # fmt: skip
    trigger = {"customer": {"name": "Ada", "email": "ada@example.com", "age": 36}, "items": [{"sku": "B-2"}],
               "order_id": 1001}  # fmt: skip
    event = await execute(flow(step), run(trigger), http=http, guard=LOCAL)

    assert event.status == "SUCCESS", event.steps[0].error
    [got] = echo.received
    assert got.method == "PUT"
    assert got.path == "/echo"
    assert got.query == {"fixed": ["1"], "email": ["ada@example.com"], "page": ["2"]}
    assert got.headers["X-Customer"] == "Ada"
    assert got.headers["Authorization"] == "Bearer s3cret"
    assert got.headers["Content-Type"] == "application/json"
    assert got.json() == {"contact": {"name": "Ada", "age": 36}, "first_sku": "B-2", "note": "Order 1001 received"}

    [result] = event.steps
    assert result.step_id == "node-2" and result.name == "Create contact" and result.app == "api_call"
    assert result.output is not None
    assert result.output["status"] == 200
    assert result.output["headers"]["x-echo"] == "yes"
    assert result.output["body"]["id"] == 42
    assert result.input["headers"]["Authorization"] == "***"  # secrets stay out of task logs
    assert result.input["body"]["contact"] == {"name": "Ada", "age": 36}
    assert "warnings" not in result.input
    assert event.run_id == "r1" and event.konnect_id == 5 and event.owner_id == 9
    assert event.konnect_name == "Orders to CRM" and event.trigger_id == "node-1"
    assert event.trigger_output == trigger
    assert event.started_at <= result.started_at <= result.finished_at <= event.finished_at


async def test_later_steps_use_earlier_outputs_and_wrap_in_array(echo: Any, http: httpx.AsyncClient) -> None:
    first = ApiCallStep(id="node-2", name="Lookup", method="GET", url=echo.base + "/echo")
    second = ApiCallStep(
        id="node-3",
        name="Forward",
        method="POST",
        url=echo.base + "/echo",
        body=[KeyValue(key="id", value="{{node-2.body.id}}"), KeyValue(key="sku", value="{{node-2.body.items.0.sku}}"),
              KeyValue(key="missing", value="{{node-2.body.nope}}")],
        wrap_in_array=True,
    )  # fmt: skip
    event = await execute(flow(first, second), run({}), http=http, guard=LOCAL)
    assert event.status == "SUCCESS"
    assert [r.method for r in echo.received] == ["GET", "POST"]
    assert echo.received[0].body == b""  # no body rows: no body
    assert echo.received[1].json() == [{"id": 42, "sku": "A-1", "missing": ""}]
    assert event.steps[1].input["warnings"] == ["Reference {{node-2.body.nope}} not found: used an empty value"]


async def test_text_reply_is_kept_as_text(echo: Any, http: httpx.AsyncClient) -> None:
    event = await execute(flow(ApiCallStep(id="node-2", name="T", method="GET", url=echo.base + "/text")),
                          run({}), http=http, guard=LOCAL)  # fmt: skip
    assert event.steps[0].output is not None
    assert event.steps[0].output["body"] == "plain text \u00e9"


async def test_http_error_fails_the_run_and_stops_it(echo: Any, http: httpx.AsyncClient) -> None:
    failing = ApiCallStep(id="node-2", name="Missing", method="GET", url=echo.base + "/status/404?key=secret")
    never = ApiCallStep(id="node-3", name="Never", url=echo.base + "/echo")
    event = await execute(flow(failing, never), run({}), http=http, guard=LOCAL)
    assert event.status == "ERROR"
    assert len(event.steps) == 1
    [result] = event.steps
    assert result.status == "ERROR"
    assert result.error == f"HTTP 404 from {echo.base}/status/404: not here: " + "x" * 190
    assert result.output is not None and result.output["status"] == 404
    assert echo.requests_to("/echo") == []


async def test_server_error_is_an_error_too(echo: Any, http: httpx.AsyncClient) -> None:
    event = await execute(flow(ApiCallStep(id="node-2", name="Boom", url=echo.base + "/status/503")),
                          run({}), http=http, guard=LOCAL)  # fmt: skip
    assert event.status == "ERROR"
    assert event.steps[0].error is not None and event.steps[0].error.startswith("HTTP 503 from ")


async def test_private_address_refused_without_allowlist(echo: Any, http: httpx.AsyncClient) -> None:
    event = await execute(flow(ApiCallStep(id="node-2", name="Local", url=echo.base + "/echo")),
                          run({}), http=http, guard=NetGuard())  # fmt: skip
    assert event.status == "ERROR"
    assert event.steps[0].error == (
        "Refused to call 127.0.0.1: 127.0.0.1 is a private address (set KONNECTZ_ALLOW_PRIVATE_NETWORKS to allow it)"
    )
    assert echo.received == []


async def test_url_from_trigger_data_is_checked_too(echo: Any, http: httpx.AsyncClient) -> None:
    step = ApiCallStep(id="node-2", name="Dyn", url="{{node-1.callback}}")
    event = await execute(flow(step), run({"callback": "http://169.254.169.254/latest"}), http=http, guard=LOCAL)
    assert event.status == "ERROR"
    assert "169.254.169.254 is a private address" in (event.steps[0].error or "")


async def test_redirects_are_followed_and_checked(echo: Any, http: httpx.AsyncClient) -> None:
    step = ApiCallStep(id="node-2", name="Go", method="POST", url=echo.base + "/redirect?to=/echo&code=302",
                       body=[KeyValue(key="a", value="1")])  # fmt: skip
    event = await execute(flow(step), run({}), http=http, guard=LOCAL)
    assert event.status == "SUCCESS", event.steps[0].error
    assert [(r.method, r.path) for r in echo.received] == [("POST", "/redirect"), ("GET", "/echo")]
    assert echo.received[1].body == b""


async def test_307_keeps_method_and_body(echo: Any, http: httpx.AsyncClient) -> None:
    step = ApiCallStep(id="node-2", name="Go", method="POST", url=echo.base + "/redirect?to=/echo&code=307",
                       body=[KeyValue(key="a", value="1")])  # fmt: skip
    event = await execute(flow(step), run({}), http=http, guard=LOCAL)
    assert event.status == "SUCCESS"
    assert [(r.method, r.path) for r in echo.received] == [("POST", "/redirect"), ("POST", "/echo")]
    assert echo.received[1].json() == {"a": "1"}


async def test_redirect_to_a_private_address_is_refused(echo: Any, http: httpx.AsyncClient) -> None:
    only_this_host = NetGuard(parse_networks("127.0.0.1/32"))
    target = f"http://127.0.0.2:{echo.port}/echo"
    step = ApiCallStep(id="node-2", name="Go", method="GET", url=f"{echo.base}/redirect?to={target}")
    event = await execute(flow(step), run({}), http=http, guard=only_this_host)
    assert event.status == "ERROR"
    assert event.steps[0].error == (
        "Refused to call 127.0.0.2: 127.0.0.2 is a private address (set KONNECTZ_ALLOW_PRIVATE_NETWORKS to allow it)"
    )
    assert [r.path for r in echo.received] == ["/redirect"]


async def test_redirect_to_metadata_address_is_refused(echo: Any, http: httpx.AsyncClient) -> None:
    step = ApiCallStep(id="node-2", name="Go", method="GET",
                       url=echo.base + "/redirect?to=http://169.254.169.254/latest/meta-data/")  # fmt: skip
    event = await execute(flow(step), run({}), http=http, guard=LOCAL)
    assert event.status == "ERROR"
    assert "169.254.169.254 is a private address" in (event.steps[0].error or "")


async def test_too_many_redirects(echo: Any, http: httpx.AsyncClient) -> None:
    event = await execute(flow(ApiCallStep(id="node-2", name="Loop", method="GET", url=echo.base + "/loop")),
                          run({}), http=http, guard=LOCAL)  # fmt: skip
    assert event.status == "ERROR"
    assert event.steps[0].error == f"Too many redirects (more than 5) calling {echo.base}/loop"
    assert len(echo.requests_to("/loop")) == 6  # the first request and 5 followed hops


@pytest.mark.parametrize("kind", ["httpx", "aiohttp"])
async def test_timeout_is_an_error_with_the_reason(echo: Any, kind: str) -> None:
    transport = AiohttpTransport(LOCAL) if kind == "aiohttp" else None
    async with httpx.AsyncClient(timeout=0.3, transport=transport) as quick:
        event = await execute(flow(ApiCallStep(id="node-2", name="Slow", method="GET", url=echo.base + "/slow")),
                              run({}), http=quick, guard=LOCAL)  # fmt: skip
    assert event.status == "ERROR"
    assert event.steps[0].error == f"Timed out calling {echo.base}/slow (ReadTimeout)"
    assert len(echo.requests_to("/slow")) == 1  # read timeouts are not retried: the call may have had effects


async def test_connection_refused_is_retried_then_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outbound, "CONNECT_BACKOFF_SECONDS", 0.0)
    attempts: list[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        raise httpx.ConnectError("Connection refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        event = await execute(flow(ApiCallStep(id="node-2", name="Down", url="http://127.0.0.1:9/x?k=v")),
                              run({}), http=client, guard=LOCAL)  # fmt: skip
    assert event.status == "ERROR"
    assert event.steps[0].error == "Could not connect to http://127.0.0.1:9/x: Connection refused"
    assert len(attempts) == outbound.CONNECT_ATTEMPTS == 3


async def test_connect_error_then_success(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outbound, "CONNECT_BACKOFF_SECONDS", 0.0)
    attempts: list[httpx.Request] = []

    def flaky(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        if len(attempts) == 1:
            raise httpx.ConnectError("Connection refused", request=request)
        return httpx.Response(201, json={"ok": True})

    async with httpx.AsyncClient(transport=httpx.MockTransport(flaky)) as client:
        event = await execute(flow(ApiCallStep(id="node-2", name="Flaky", url="http://127.0.0.1:9/x")),
                              run({}), http=client, guard=LOCAL)  # fmt: skip
    assert event.status == "SUCCESS"
    headers = {"content-length": "11", "content-type": "application/json"}
    assert event.steps[0].output == {"status": 201, "headers": headers, "body": {"ok": True}}
    assert len(attempts) == 2


async def test_response_larger_than_limit_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def big(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"x" * 2048)

    async with httpx.AsyncClient(transport=httpx.MockTransport(big)) as client:
        ctx = StepContext(outputs={}, http=client, guard=LOCAL)
        result = await api_call.run(ApiCallStep(id="node-2", name="Big", url="http://127.0.0.1:9/x"), ctx,
                                    max_response_bytes=1024)  # fmt: skip
    assert result.status == "ERROR"
    assert result.error == "Response from http://127.0.0.1:9/x is larger than 1024 bytes"


async def test_aiohttp_transport_caps_sizes_and_retries_refused_connections(
    echo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outbound, "CONNECT_BACKOFF_SECONDS", 0.0)
    async with httpx.AsyncClient(timeout=5, transport=AiohttpTransport(LOCAL)) as client:
        ctx = StepContext(outputs={}, http=client, guard=LOCAL)
        big = await api_call.run(ApiCallStep(id="node-2", name="Big", method="GET", url=echo.base + "/status/404"),
                                 ctx, max_response_bytes=100)  # fmt: skip
        assert big.error == f"Response from {echo.base}/status/404 is larger than 100 bytes"
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        closed.close()  # nothing listens there
        down = await api_call.run(ApiCallStep(id="node-2", name="Down", url=f"http://127.0.0.1:{port}/x"), ctx)
        assert down.error is not None and down.error.startswith(f"Could not connect to http://127.0.0.1:{port}/x: ")
        ok = await api_call.run(ApiCallStep(id="node-2", name="Text", method="GET", url=echo.base + "/text"), ctx)
        assert ok.status == "SUCCESS" and ok.output is not None and ok.output["body"] == "plain text \u00e9"
    assert len(echo.requests_to("/status/404")) == 1


async def test_non_http_scheme_in_a_step_is_refused(http: httpx.AsyncClient) -> None:
    event = await execute(flow(ApiCallStep(id="node-2", name="File", url="file:///etc/passwd")),
                          run({}), http=http, guard=LOCAL)  # fmt: skip
    assert event.status == "ERROR"
    assert event.steps[0].error == "Refused to call file:///etc/passwd: only http and https URLs are allowed"


async def test_header_that_cannot_be_sent_is_a_step_error(echo: Any, http: httpx.AsyncClient) -> None:
    step = ApiCallStep(
        id="node-2", name="H", url=echo.base + "/echo", headers=[KeyValue(key="X-Name", value="{{node-1.n}}")]
    )
    event = await execute(flow(step), run({"n": "Zo\u00e9"}), http=http, guard=LOCAL)
    assert event.status == "ERROR"
    assert (event.steps[0].error or "").startswith(f"Invalid request to {echo.base}/echo: ")
    assert echo.received == []


async def test_the_event_names_the_revision_of_the_spec_that_ran(echo: Any, http: httpx.AsyncClient) -> None:
    # revisions: the api sets FlowSpec.revision on publish; the task event carries it to the task log.
    step = ApiCallStep(id="node-2", name="T", method="GET", url=echo.base + "/text")
    published = flow(step).model_copy(update={"revision": 4})
    assert (await execute(published, run({}), http=http, guard=LOCAL)).revision == 4
    assert (await execute(flow(step), run({}), http=http, guard=LOCAL)).revision is None
