"""Rate budgets per app account (konnectz_runner.apps.budgets) against a real nats-server."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from datetime import UTC, datetime
from typing import Any

import nats
import pytest

from konnectz_contracts.budgets import KV_BUDGETS, budget_key, budget_usage, refilled
from konnectz_contracts.manifest import App
from konnectz_devstack.fake_apps import curated_app
from konnectz_runner.apps import Budget, Budgets, wait_reason
from konnectz_runner.bus import ensure_streams
from konnectz_runner.engine import app_event

pytestmark = pytest.mark.integration


def _account() -> int:
    return secrets.randbelow(10**9) + 1


async def test_the_bucket_is_created_with_a_ttl_and_history_1(nc) -> None:
    status = await (await nc.jetstream().key_value(KV_BUDGETS)).status()
    assert status.history == 1
    assert status.ttl and status.ttl > 0


async def test_takes_space_requests_at_the_rate_after_the_burst(nc) -> None:
    budgets = Budgets(nc.jetstream())
    budget = Budget(_account(), rate=10.0, burst=2)
    started = time.monotonic()
    taken = [await budgets.take(budget) for _ in range(6)]
    elapsed = time.monotonic() - started
    assert all(t.shared for t in taken)
    assert taken[0].waited == 0 and taken[1].waited == 0  # the burst
    assert all(t.waited > 0 for t in taken[2:])
    # 2 at once, then 4 more at 10/s: at least 0.4 s.
    assert 0.35 <= elapsed < 2.0


async def test_concurrent_takers_on_separate_connections_share_one_budget(nats_server) -> None:
    """Three connections (as three runner processes) taking 15 tokens at 5/s: the takes are 0.2 s apart."""
    clients = [await nats.connect(nats_server.admin_url) for _ in range(3)]
    try:
        await ensure_streams(clients[0].jetstream())  # KZ_BUDGETS, as a runner makes it at start
        budget = Budget(_account(), rate=5.0, burst=1)
        slots: list[float] = []

        async def taker(budgets: Budgets) -> None:
            for _ in range(5):
                await budgets.take(budget)
                slots.append(time.time())

        await asyncio.gather(*(taker(Budgets(c.jetstream())) for c in clients))
        slots.sort()
        assert len(slots) == 15
        # 1 at once, then one per 0.2 s: 14 intervals of 0.2 s at least (minus timer slack).
        assert slots[-1] - slots[0] >= 14 * 0.2 - 0.1
        for start in slots:
            in_window = [s for s in slots if start <= s < start + 1.0]
            assert len(in_window) <= 5 + 1, in_window
        kv = await clients[0].jetstream().key_value(KV_BUDGETS)
        state = json.loads((await kv.get(budget_key(budget.account_id))).value)
        assert state["rate"] == 5.0 and state["burst"] == 1
        # ``recent`` counts reserved slots: every take's, plus a slot forfeited by a taker that woke too
        # late (its process stalled: a loaded machine) or a write that timed out but was applied. Such
        # a slot is never used, so the pacing above holds; the count is never below the takes.
        assert sum(state["recent"].values()) >= 15
    finally:
        for c in clients:
            await c.close()


async def test_usage_reads_tokens_left_and_requests_in_the_last_minute(nc) -> None:
    budgets = Budgets(nc.jetstream())
    budget = Budget(_account(), rate=1.0, burst=3)
    for _ in range(2):
        await budgets.take(budget)
    kv = await nc.jetstream().key_value(KV_BUDGETS)
    raw = (await kv.get(budget_key(budget.account_id))).value
    usage = budget_usage(raw, 1.0, 3)
    assert usage["used_last_minute"] == 2
    assert 1.0 <= usage["tokens_left"] < 1.5
    assert budget_usage(None, 1.0, 3) == {"tokens_left": 3.0, "used_last_minute": 0}
    assert budget_usage(b"not json", None, 1) == {"tokens_left": None, "used_last_minute": 0}
    # An hour later the minute is empty and the bucket full.
    assert budget_usage(raw, 1.0, 3, now=time.time() + 3600) == {"tokens_left": 3.0, "used_last_minute": 0}


async def test_without_nats_kv_requests_are_spaced_within_the_process(caplog) -> None:
    budgets = Budgets(None)
    budget = Budget(_account(), rate=20.0, burst=1)
    with caplog.at_level("WARNING"):
        taken = [await budgets.take(budget) for _ in range(3)]
    assert not any(t.shared for t in taken)
    assert taken[0].waited == 0 and taken[1].waited > 0.02 and taken[2].waited > 0.02
    warnings = [r for r in caplog.records if "Rate budgets" in r.getMessage()]
    assert len(warnings) == 1  # one line per outage, not one per request


async def test_a_closed_connection_falls_back_and_logs(nats_server) -> None:
    client = await nats.connect(nats_server.admin_url)
    await ensure_streams(client.jetstream())  # KZ_BUDGETS, as a runner makes it at start
    budgets = Budgets(client.jetstream())
    budget = Budget(_account(), rate=50.0, burst=1)
    assert (await budgets.take(budget)).shared
    await client.close()
    assert not (await budgets.take(budget)).shared


def test_wait_reason_names_the_app_account_and_rate() -> None:
    text = wait_reason("Slack", "Work", Budget(1, 1.0, 1), 1.43)
    assert text == "Waited 1.4 s for the rate budget of Slack (account 'Work'): 1 request/s"
    assert wait_reason("Slack", None, Budget(7, 2.5, 1, "override"), 0.4) == (
        "Waited 0.4 s for the rate budget of Slack (account 7): 2.5 requests/s (your override)"
    )


def _app(rps: float | None, burst: int = 1) -> App:
    rate: dict[str, Any] = {"burst": burst}
    if rps is not None:
        rate["requests_per_second"] = rps
    event = {"key": "ping", "kind": "action", "label": "Ping", "operation": {"method": "GET", "path": "/ping"}}
    manifest = curated_app(999001, "budgetprobe", "Budget Probe", {"type": "none"}, [event], rate_limit=rate)
    return App.model_validate({**manifest, "base_url": "http://127.0.0.1:1"})


def test_the_account_override_wins_over_the_app_default() -> None:
    account = _account()
    assert app_event.account_budget(_app(None), account) is None
    assert app_event.account_budget(_app(2.0, burst=3), account) == Budget(account, 2.0, 3, "app default")
    app_event.remember_account(account, 0.5, "Work")
    assert app_event.account_budget(_app(2.0), account) == Budget(account, 0.5, 1, "override")
    assert app_event.account_budget(_app(None), account) == Budget(account, 0.5, 1, "override")
    assert app_event.account_budget(_app(2.0), None) is None


async def test_an_app_step_that_waited_says_so_in_its_step_result(nc, echo, make_ctx) -> None:
    """The app_event step takes its account's tokens from KZ_BUDGETS; the waits reach the StepResult."""
    import dataclasses

    from konnectz_contracts.steps.app_event import AppEventStep
    from konnectz_runner.apps import Catalogue
    from konnectz_runner.engine import step_result

    auth = {
        "type": "api_key",
        "fields": [{"key": "api_key", "label": "API Key"}],
        "inject": [{"location": "header", "name": "X-Key", "value": "{{auth.api_key}}"}],
    }
    event = {"key": "ping", "kind": "action", "label": "Ping", "operation": {"method": "POST", "path": "/echo"}}
    manifest = curated_app(999002, "budgetecho", "Budget Echo", auth, [event], rate_limit={"requests_per_second": 1})
    app = App.model_validate({**manifest, "base_url": echo.base})
    account = _account()
    app_event.set_catalogue(lambda: Catalogue(apps=[app]))

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        app_event.remember_account(account_id, 4.0, "Work")  # as the broker's reply does
        return {"api_key": "k"}

    app_event.set_credential_source(source)
    step = AppEventStep(id="node-2", name="Ping", app_id=999002, event="ping", account_id=account, fields=[])
    try:
        ctx = dataclasses.replace(make_ctx(), budgets=Budgets(nc.jetstream()))
        outcomes = [await app_event.run(step, ctx) for _ in range(3)]
    finally:
        app_event.set_credential_source(None)
        app_event.set_catalogue(app_event.default_catalogue)
    assert [o.status for o in outcomes] == ["SUCCESS"] * 3
    assert outcomes[0].wait_reason is None and outcomes[0].waited_seconds is None  # the burst: no wait
    waited = outcomes[2]
    assert waited.waited_seconds is not None and 0.1 < waited.waited_seconds < 1.0  # 4/s: about 0.25 s
    assert waited.wait_reason is not None
    assert "for the rate budget of Budget Echo (account 'Work'): 4 requests/s (your override)" in waited.wait_reason
    result = step_result(step, waited, datetime.now(UTC))
    assert result.waited_seconds == waited.waited_seconds and result.wait_reason == waited.wait_reason


async def test_a_polling_trigger_takes_its_accounts_tokens(nc, echo) -> None:
    """The poller's requests to a catalogue app come out of the same account budget."""
    import httpx

    from konnectz_contracts.triggers.polling import PollingTrigger
    from konnectz_runner.apps import NetGuard, parse_networks
    from konnectz_runner.engine import app_items

    event = {
        "key": "new_item",
        "kind": "trigger",
        "label": "New Item",
        "operation": {"method": "GET", "path": "/echo"},
        "output": {"items_path": "items"},
        "trigger": {"type": "polling"},
    }
    auth = {
        "type": "api_key",
        "fields": [{"key": "api_key", "label": "API Key"}],
        "inject": [{"location": "header", "name": "X-Key", "value": "{{auth.api_key}}"}],
    }
    manifest = curated_app(999003, "budgetpoll", "Budget Poll", auth, [event], rate_limit={"requests_per_second": 2})
    app = App.model_validate({**manifest, "base_url": echo.base})
    account = _account()
    trigger = PollingTrigger(app_id=999003, event="new_item", account_id=account)

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return {"api_key": "k"}

    budgets = Budgets(nc.jetstream())
    guard = NetGuard(parse_networks("127.0.0.0/8"))
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=5) as http:
        for _ in range(2):
            items = await app_items(trigger, _cursor(), konnect_id=1, owner_id=1, http=http, guard=guard,
                                    credential_source=source, app=app, budgets=budgets)  # fmt: skip
            assert items == [{"sku": "A-1"}]
    assert time.monotonic() - started >= 0.4  # the second poll waited for its token (2/s)
    kv = await nc.jetstream().key_value(KV_BUDGETS)
    state = json.loads((await kv.get(budget_key(account))).value)
    assert sum(state["recent"].values()) == 2 and state["rate"] == 2.0


def _cursor() -> Any:
    from konnectz_contracts.triggers.polling import Cursor

    return Cursor()


def test_slots_reserved_at_another_rate_keep_the_time_they_promised() -> None:
    """Ten slots reserved at 100/s (0.1 s ahead) are 0.1 s ahead at 1/s too, not 10 s."""
    now = time.time()
    state = {"tokens": -10.0, "updated_at": now, "rate": 100.0, "burst": 1}
    assert refilled(state, rate=1.0, burst=1, now=now) == pytest.approx(-0.1)
    assert refilled(state, rate=100.0, burst=1, now=now) == pytest.approx(-10.0)
    # Refilled at the pace (the rate less the 2% headroom): 0.25 s at 1/s is 0.245 of a token.
    assert refilled({**state, "tokens": 0.5}, rate=1.0, burst=1, now=now + 0.25) == pytest.approx(0.745)
