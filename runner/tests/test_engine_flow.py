"""The engine with add-ons: order, outputs per node, iterator fan-out, filter stop (real HTTP server)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from konnectz_contracts.events import RunRequest
from konnectz_contracts.model import KeyValue
from konnectz_contracts.spec import FlowSpec, WebhookTrigger
from konnectz_contracts.steps import api_call, filter, formatter, iterator
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.engine import execute

LOCAL = NetGuard(parse_networks("127.0.0.0/8"))


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=5) as client:
        yield client


def spec(*steps: Any, timezone: str = "UTC") -> FlowSpec:
    return FlowSpec(
        konnect_id=5,
        owner_id=9,
        name="Orders",
        trigger_id="node-1",
        trigger=WebhookTrigger(token="t" * 32),
        steps=list(steps),
        timezone=timezone,
    )


def run(data: dict[str, Any]) -> RunRequest:
    return RunRequest(run_id="r1", konnect_id=5, trigger_output=data, received_at=datetime.now(UTC))


def big_orders(threshold: str = "10") -> filter.Config:
    return filter.Config(
        id="node-2",
        name="Big orders",
        conditions=[filter.Condition(field="{{node-1.total}}", operator="greater_than", value=threshold)],
    )


UPPER = formatter.Config(id="node-3", name="Upper", operation="text.upper", input="{{node-1.customer}}")
EACH = iterator.Config(id="node-4", name="Each line", input="{{node-1.lines}}")


def call(echo: Any) -> api_call.Config:
    return api_call.Config(
        id="node-5",
        name="Post line",
        url=echo.base + "/echo",
        body=[
            KeyValue(key="customer", value="{{node-3.output}}"),
            KeyValue(key="sku", value="{{node-4.sku}}"),
            KeyValue(key="qty", value="{{node-4.qty}}"),
        ],
    )


ORDER = {"total": 25, "customer": "ada", "lines": [{"sku": "A-1", "qty": 1}, {"sku": "B-2", "qty": 3}]}


async def test_filter_formatter_iterator_api_call(echo: Any, http: httpx.AsyncClient) -> None:
    event = await execute(spec(big_orders(), UPPER, EACH, call(echo)), run(ORDER), http=http, guard=LOCAL)
    assert event.status == "SUCCESS", [s.error for s in event.steps]
    assert [r.json() for r in echo.received] == [
        {"customer": "ADA", "sku": "A-1", "qty": 1},
        {"customer": "ADA", "sku": "B-2", "qty": 3},
    ]
    records = [(s.step_id, s.app, s.item_index) for s in event.steps]
    assert records == [
        ("node-2", "filter", None),
        ("node-3", "formatter", None),
        ("node-4", "iterator", None),
        ("node-5", "api_call", 0),
        ("node-5", "api_call", 1),
    ]
    assert event.steps[2].output == {"count": 2, "items": ORDER["lines"]}
    assert event.steps[4].input["body"] == {"customer": "ADA", "sku": "B-2", "qty": 3}
    assert all(s.stop is None for s in event.steps)


async def test_a_filtered_run_is_success_and_says_which_condition(echo: Any, http: httpx.AsyncClient) -> None:
    event = await execute(spec(big_orders("100"), UPPER, EACH, call(echo)), run(ORDER), http=http, guard=LOCAL)
    assert event.status == "SUCCESS"
    assert [s.step_id for s in event.steps] == ["node-2"]
    [stopped] = event.steps
    assert stopped.status == "SUCCESS"
    assert stopped.stop == "Stopped by condition 1 ({{node-1.total}} Greater Than '100') did not pass: the value was 25"
    assert stopped.output is not None and stopped.output["passed"] is False
    assert echo.received == []


async def test_a_filter_after_the_iterator_skips_only_its_item(echo: Any, http: httpx.AsyncClient) -> None:
    only_many = filter.Config(
        id="node-6",
        name="Qty > 1",
        conditions=[filter.Condition(field="{{node-4.qty}}", operator="greater_than", value="1")],
    )
    event = await execute(spec(UPPER, EACH, only_many, call(echo)), run(ORDER), http=http, guard=LOCAL)
    assert event.status == "SUCCESS"
    assert [(s.step_id, s.item_index, s.stop is not None) for s in event.steps] == [
        ("node-3", None, False),
        ("node-4", None, False),
        ("node-6", 0, True),
        ("node-6", 1, False),
        ("node-5", 1, False),
    ]
    assert [r.json()["sku"] for r in echo.received] == ["B-2"]


async def test_an_error_in_one_item_ends_the_run(echo: Any, http: httpx.AsyncClient) -> None:
    failing = api_call.Config(id="node-5", name="Post", method="GET", url=echo.base + "/status/{{node-4.code}}")
    order = {"lines": [{"code": 404}, {"code": 200}]}
    event = await execute(spec(EACH, failing), run(order), http=http, guard=LOCAL)
    assert event.status == "ERROR"
    assert [(s.step_id, s.item_index, s.status) for s in event.steps] == [
        ("node-4", None, "SUCCESS"),
        ("node-5", 0, "ERROR"),
    ]


async def test_no_items_means_nothing_after_the_iterator_runs(echo: Any, http: httpx.AsyncClient) -> None:
    event = await execute(spec(EACH, call(echo)), run({"lines": []}), http=http, guard=LOCAL)
    assert event.status == "SUCCESS" and [s.step_id for s in event.steps] == ["node-4"]
    assert echo.received == []


async def test_the_flow_time_zone_reaches_the_steps(http: httpx.AsyncClient) -> None:
    fmt = formatter.Config(id="node-2", name="F", operation="date.format", input="2026-07-01 12:00", to_format="iso")
    event = await execute(spec(fmt, timezone="Asia/Tokyo"), run({}), http=http, guard=LOCAL)
    assert event.steps[0].output == {"output": "2026-07-01T12:00:00+09:00"}


def test_a_spec_has_at_most_one_iterator_and_a_known_zone() -> None:
    second = EACH.model_copy(update={"id": "node-9"})
    with pytest.raises(ValidationError, match=r"The iterator can only be used once\."):
        spec(EACH, second)
    with pytest.raises(ValidationError, match="unknown time zone"):
        spec(UPPER, timezone="Nowhere/City")
    with pytest.raises(ValidationError, match="node ids must be unique"):
        spec(UPPER, UPPER)
