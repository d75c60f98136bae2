"""Delay: units and ids of the editor, Delay Until, DST, and the engine's suspend/resume."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from konnectz_contracts.events import RunRequest, TaskEvent
from konnectz_contracts.spec import DELAY_AFTER_ITERATOR, FlowSpec, WebhookTrigger
from konnectz_contracts.steps import delay as delay_config
from konnectz_contracts.steps import iterator
from konnectz_contracts.steps.api_call import ApiCallStep
from konnectz_contracts.steps.delay import DelayStep, from_timer_config
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.engine import Suspended, execute, suspension_failed
from konnectz_runner.engine.steps import delay

BERLIN = "Europe/Berlin"
NOW = datetime(2026, 3, 28, 9, 0, tzinfo=UTC)  # Saturday 10:00 CET; the clocks go forward on Sunday


def z(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.parametrize(
    ("unit_id", "amount", "timezone", "expected"),
    [
        (514, 45, "UTC", "2026-03-28T09:45:00Z"),  # Minutes
        (322, 24, BERLIN, "2026-03-29T09:00:00Z"),  # Hours are elapsed: 24 h later is 11:00 CEST
        (511, 1, BERLIN, "2026-03-29T08:00:00Z"),  # Days keep the wall time: 10:00 CEST
        (3228, 2, BERLIN, "2026-04-11T08:00:00Z"),  # Weeks keep it too
        (511, 1, "UTC", "2026-03-29T09:00:00Z"),
    ],
)
async def test_delay_for_each_unit(make_ctx: Any, unit_id: int, amount: int, timezone: str, expected: str) -> None:
    step = from_timer_config(id="node-3", name="Wait", delay_type=515, delay_unit=unit_id, delay_value=str(amount))
    assert step.unit == delay_config.UNIT_IDS[unit_id]
    outcome = await delay.run(step, make_ctx(timezone=timezone, now=NOW))
    assert outcome.status == "SUCCESS"
    assert outcome.resume_at == z(expected)
    assert outcome.output == {"resume_at": expected, "waited": True}
    assert outcome.input == {"mode": "for", "amount": amount, "unit": delay_config.UNIT_IDS[unit_id]}


async def test_delay_of_a_day_into_the_fall_back_hour_takes_its_first_occurrence(make_ctx: Any) -> None:
    # Saturday 02:30 CEST; Sunday 02:30 happens twice in Berlin: the first one (CEST) is taken.
    step = DelayStep(id="n", name="Wait", mode="for", amount=1, unit="days")
    outcome = await delay.run(step, make_ctx(timezone=BERLIN, now=z("2026-10-24T00:30:00Z")))
    assert outcome.resume_at == z("2026-10-25T00:30:00Z")


async def test_delay_of_a_day_into_the_spring_gap_moves_past_the_gap(make_ctx: Any) -> None:
    step = DelayStep(id="n", name="Wait", mode="for", amount=1, unit="days")
    outcome = await delay.run(step, make_ctx(timezone=BERLIN, now=z("2026-03-28T01:30:00Z")))  # 02:30 CET
    assert outcome.resume_at == z("2026-03-29T01:30:00Z")  # 02:30 does not exist: 03:30 CEST


async def test_delay_until_reads_local_times_in_the_owner_zone_and_resolves_references(make_ctx: Any) -> None:
    step = from_timer_config(id="n", name="Wait", delay_type=328, value="{{node-1.when}}")
    ctx = make_ctx({"node-1": {"when": "2026-04-01 18:30"}}, timezone=BERLIN, now=NOW)
    outcome = await delay.run(step, ctx)
    assert outcome.resume_at == z("2026-04-01T16:30:00Z")
    assert outcome.input == {"mode": "until", "until": "2026-04-01 18:30"}
    with_offset = DelayStep(id="n", name="Wait", mode="until", until="2026-04-01T18:30:00-04:00")
    assert (await delay.run(with_offset, make_ctx(timezone=BERLIN, now=NOW))).resume_at == z("2026-04-01T22:30:00Z")


async def test_delay_until_a_past_time_continues_at_once(make_ctx: Any) -> None:
    step = DelayStep(id="n", name="Wait", mode="until", until="2020-01-01T00:00:00Z")
    outcome = await delay.run(step, make_ctx(now=NOW))
    assert outcome.status == "SUCCESS" and outcome.resume_at is None
    assert outcome.output == {"resume_at": "2020-01-01T00:00:00Z", "waited": False,
                              "message": "The time has passed: continued at once"}  # fmt: skip


async def test_bad_delays_fail_with_a_message(make_ctx: Any) -> None:
    garbage = DelayStep(id="n", name="Wait", mode="until", until="{{node-1.missing}} next tuesdayish")
    outcome = await delay.run(garbage, make_ctx({"node-1": {}}, now=NOW))
    assert outcome.status == "ERROR" and "is not a date and time" in (outcome.error or "")
    too_far = DelayStep(id="n", name="Wait", mode="until", until="2030-01-01T00:00:00Z")
    outcome = await delay.run(too_far, make_ctx(now=NOW))
    assert outcome.status == "ERROR" and outcome.error == "A delay can last at most 366 days"


@pytest.mark.parametrize("value", ["", "1.5", "-3", "abc", "١٢", None, True])
def test_timer_config_value_must_be_an_integer(value: Any) -> None:
    with pytest.raises(ValueError, match="Please Fill Integer Only"):
        from_timer_config(id="n", name="W", delay_type=515, delay_unit=514, delay_value=value)


def test_timer_config_rejects_unknown_ids_and_out_of_range_amounts() -> None:
    with pytest.raises(ValueError, match="Unknown delay type"):
        from_timer_config(id="n", name="W", delay_type=999)
    with pytest.raises(ValueError, match="Unknown delay unit"):
        from_timer_config(id="n", name="W", delay_type=515, delay_unit=1, delay_value="3")
    with pytest.raises(ValidationError):
        from_timer_config(id="n", name="W", delay_type=515, delay_unit=514, delay_value="0")
    with pytest.raises(ValidationError):
        from_timer_config(id="n", name="W", delay_type=328, value="")
    assert from_timer_config(id="n", name="W", delay_type=515, delay_unit=3228, delay_value=3).amount == 3


def _flow(*steps: Any) -> FlowSpec:
    return FlowSpec(konnect_id=5, owner_id=9, name="F", trigger_id="node-1", trigger=WebhookTrigger(token="t" * 32),
                    steps=list(steps), timezone=BERLIN)  # fmt: skip


def test_a_delay_after_the_iterator_is_refused() -> None:
    it = iterator.Config(id="node-2", name="Each", input="{{node-1.items}}")
    wait = DelayStep(id="node-3", name="Wait", amount=5)
    with pytest.raises(ValidationError, match=DELAY_AFTER_ITERATOR):
        _flow(it, wait)
    _flow(wait, it)  # before the iterator it is fine


async def test_engine_suspends_at_the_delay_and_resumes_after_it(echo: Any) -> None:
    send = ApiCallStep(id="node-3", name="Send", method="POST", url=echo.base + "/echo",
                       body=[{"key": "n", "value": "{{node-1.n}}"}])  # type: ignore[list-item]  # fmt: skip
    spec = _flow(DelayStep(id="node-2", name="Wait", amount=10), send)
    run = RunRequest(run_id="r1", konnect_id=5, trigger_output={"n": "7"}, received_at=datetime.now(UTC))
    guard = NetGuard(parse_networks("127.0.0.0/8"))
    async with httpx.AsyncClient(timeout=5) as http:
        first = await execute(spec, run, http=http, guard=guard)
        assert isinstance(first, Suspended)
        assert echo.received == []  # nothing after the delay ran
        assert timedelta(minutes=9) < first.resume_at - datetime.now(UTC) <= timedelta(minutes=10)
        cont = first.continuation
        assert cont.after_step == "node-2" and [s.step_id for s in cont.steps] == ["node-2"]
        assert cont.outputs["node-1"] == {"n": "7"}

        resumed = run.model_copy(update={"resume": cont})
        # Through JSON, as the timer stores it.
        resumed = RunRequest.model_validate_json(resumed.model_dump_json())
        event = await execute(spec, resumed, http=http, guard=guard)
        assert isinstance(event, TaskEvent)
        assert event.status == "SUCCESS" and event.run_id == "r1"
        assert [s.step_id for s in event.steps] == ["node-2", "node-3"]
        assert event.started_at == cont.started_at
        assert [r.json() for r in echo.received] == [{"n": "7"}]

        # The konnect was republished without the delay step: the run ends with a clear error.
        changed = _flow(send)
        gone = await execute(changed, resumed, http=http, guard=guard)
        assert isinstance(gone, TaskEvent) and gone.status == "ERROR"
        assert gone.steps[-1].error == "The konnect changed while this run waited: step node-2 is no longer in it"

        failed = suspension_failed(spec, run, first, "could not store")
        assert failed.status == "ERROR" and failed.steps[-1].error == "could not store"
