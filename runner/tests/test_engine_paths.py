"""Paths that join: a router's chosen paths run concurrently, the others are SKIPPED, the join merges.

The steps on the paths are real formatter and filter steps; where timing or a failure must be
controlled, the ``hash`` kind's ``run`` is swapped for a recording one (``text`` says what it does).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from konnectz_contracts.events import KV_STEPS, RunRequest, TaskEvent
from konnectz_contracts.model import KeyValue
from konnectz_contracts.spec import FlowSpec, WebhookTrigger
from konnectz_contracts.steps import api_call, delay, filter, formatter, hash, iterator, join, router
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.engine import Outcome, StepContext, StepJournal, Suspended, execute
from konnectz_runner.engine import steps as runner_steps

LOCAL = NetGuard(parse_networks("127.0.0.0/8"))


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=5) as client:
        yield client


def spec(*steps: Any) -> FlowSpec:
    return FlowSpec(
        konnect_id=5,
        owner_id=9,
        name="Orders",
        trigger_id="node-1",
        trigger=WebhookTrigger(token="t" * 32),
        steps=list(steps),
    )


def run(data: dict[str, Any]) -> RunRequest:
    return RunRequest(run_id="r1", konnect_id=5, trigger_output=data, received_at=datetime.now(UTC))


def cond(field: str, operator: str, value: str = "") -> filter.Condition:
    return filter.Condition(field=field, operator=operator, value=value)  # type: ignore[arg-type]


def path(name: str, steps: list[str], *conditions: filter.Condition, otherwise: bool = False) -> router.RouterPath:
    return router.RouterPath(name=name, conditions=list(conditions), otherwise=otherwise, steps=steps)


def upper(step_id: str, text: str) -> formatter.Config:
    return formatter.Config(id=step_id, name=f"Upper {step_id}", operation="text.upper", input=text)


def fake(step_id: str, text: str) -> hash.Config:
    return hash.Config(id=step_id, name=f"Fake {step_id}", text=text)


PAID = cond("{{node-1.paid}}", "equals", "yes")
BIG = cond("{{node-1.total}}", "greater_than", "100")


def router_of(*paths: router.RouterPath, mode: str = "parallel") -> router.Config:
    return router.Config(id="router", name="Router", mode=mode, paths=list(paths))  # type: ignore[arg-type]


def by_id(event: TaskEvent) -> dict[str, Any]:
    return {s.step_id: s for s in event.steps}


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, float]]:
    """The ``hash`` kind becomes: sleep 0.3 s and return the text; fail when the text is "boom"."""
    events: list[tuple[str, str, float]] = []

    async def slow(config: Any, ctx: StepContext) -> Outcome:
        events.append(("start", config.id, time.perf_counter()))
        await asyncio.sleep(0.3)
        events.append(("end", config.id, time.perf_counter()))
        if config.text == "boom":
            return Outcome.failed("boom failed")
        return Outcome(output={"text": config.text, "seen": sorted(k for k in ctx.outputs if k.startswith("p"))})

    monkeypatch.setitem(runner_steps.KINDS, "hash", slow)
    return events


async def test_two_chosen_paths_run_concurrently_and_the_join_merges(
    http: httpx.AsyncClient, recorded: list[tuple[str, str, float]]
) -> None:
    flow = spec(
        router_of(path("Paid", ["pa1", "pa2"], PAID), path("Big order", ["pb1"], BIG)),
        fake("pa1", "a1"),
        upper("pa2", "{{pa1.text}}"),
        fake("pb1", "b1"),
        join.Config(id="join", name="Join", router="router"),
        upper("after", "{{join.Paid.output}}+{{join.Big order.text}}+{{pb1.text}}"),
    )
    clock = time.perf_counter()
    event = await execute(flow, run({"paid": "yes", "total": 250}), http=http, guard=LOCAL)
    elapsed = time.perf_counter() - clock
    assert event.status == "SUCCESS", [s.error for s in event.steps]
    # Both slow steps started before either ended: the paths ran at the same time.
    assert [kind for kind, _id, _t in recorded] == ["start", "start", "end", "end"]
    assert {i for _k, i, _t in recorded[:2]} == {"pa1", "pb1"}
    assert elapsed < 0.55, elapsed
    steps = by_id(event)
    assert [s.step_id for s in event.steps] == ["router", "pa1", "pa2", "pb1", "join", "after"]
    assert steps["router"].output == {"paths": ["Paid", "Big order"], "mode": "parallel"}
    paths = (steps["pa1"].path, steps["pa2"].path, steps["pb1"].path)
    assert paths == ("router/Paid", "router/Paid", "router/Big order")
    assert steps["router"].path is None and steps["join"].path is None and steps["after"].path is None
    # Each path sees only its own steps (and what came before the router).
    assert steps["pa1"].output["seen"] == [] and steps["pb1"].output["seen"] == []
    assert steps["join"].output == {"Paid": {"output": "A1"}, "Big order": {"text": "b1", "seen": []}}
    assert steps["after"].output == {"output": "A1+B1+B1"}


async def test_first_match_runs_only_the_first_passing_path(http: httpx.AsyncClient) -> None:
    flow = spec(
        router_of(path("Paid", ["pa"], PAID), path("Big", ["pb"], BIG), mode="first_match"),
        upper("pa", "a"),
        upper("pb", "b"),
        join.Config(id="join", name="Join", router="router"),
        upper("after", "{{join.Paid.output}}|{{join.Big}}"),
    )
    event = await execute(flow, run({"paid": "yes", "total": 250}), http=http, guard=LOCAL)
    steps = by_id(event)
    assert event.status == "SUCCESS"
    assert steps["router"].output == {"paths": ["Paid"], "mode": "first_match"}
    assert steps["pa"].status == "SUCCESS"
    assert steps["pb"].status == "SKIPPED" and steps["pb"].path == "router/Big"
    assert steps["pb"].stop == "Path Big: its conditions passed, but first match ran path Paid"
    assert steps["join"].output == {"Paid": {"output": "A"}, "Big": None}
    assert steps["after"].output == {"output": "A|"}


async def test_otherwise_runs_when_no_other_path_passes(http: httpx.AsyncClient) -> None:
    flow = spec(
        router_of(path("Paid", ["pa"], PAID), path("Rest", ["pr"], otherwise=True)),
        upper("pa", "a"),
        upper("pr", "r"),
        join.Config(id="join", name="Join", router="router"),
    )
    event = await execute(flow, run({"paid": "no"}), http=http, guard=LOCAL)
    steps = by_id(event)
    assert steps["router"].output["paths"] == ["Rest"]
    assert steps["pa"].status == "SKIPPED"
    assert steps["pa"].stop == "Path Paid: its conditions did not pass"
    assert steps["pr"].status == "SUCCESS" and steps["pr"].path == "router/Rest"
    assert steps["join"].output == {"Paid": None, "Rest": {"output": "R"}}
    # ... and is skipped when one does.
    event = await execute(flow, run({"paid": "yes"}), http=http, guard=LOCAL)
    steps = by_id(event)
    assert steps["pr"].status == "SKIPPED" and "otherwise path" in (steps["pr"].stop or "")


async def test_no_path_chosen_stops_at_the_router(http: httpx.AsyncClient) -> None:
    flow = spec(
        router_of(path("Paid", ["pa"], PAID)),
        upper("pa", "a"),
        join.Config(id="join", name="Join", router="router"),
        upper("after", "x"),
    )
    event = await execute(flow, run({"paid": "no"}), http=http, guard=LOCAL)
    assert event.status == "SUCCESS"
    assert [(s.step_id, s.status) for s in event.steps] == [("router", "SUCCESS"), ("pa", "SKIPPED")]
    assert event.steps[0].stop == "No path's conditions passed"


async def test_a_filter_stops_only_its_path_and_join_all_stops_the_run(http: httpx.AsyncClient) -> None:
    def flow(wait: str) -> FlowSpec:
        return spec(
            router_of(path("Paid", ["f", "pa"], PAID), path("Big", ["pb"], BIG)),
            filter.Config(id="f", name="Only EU", conditions=[cond("{{node-1.region}}", "equals", "EU")]),
            upper("pa", "a"),
            upper("pb", "b"),
            join.Config(id="join", name="Join", router="router", wait=wait),  # type: ignore[arg-type]
            upper("after", "{{join.Big.output}}"),
        )

    event = await execute(flow("all"), run({"paid": "yes", "total": 250, "region": "US"}), http=http, guard=LOCAL)
    steps = by_id(event)
    assert event.status == "SUCCESS"
    assert steps["f"].stop is not None and steps["f"].path == "router/Paid"
    assert "pa" not in steps  # the path stopped at its filter
    assert steps["pb"].status == "SUCCESS"  # the other path went on
    assert steps["join"].output == {"Paid": None, "Big": {"output": "B"}}
    assert (steps["join"].stop or "").startswith("Path Paid did not reach the join: Stopped by condition 1")
    assert "after" not in steps

    event = await execute(flow("any"), run({"paid": "yes", "total": 250, "region": "US"}), http=http, guard=LOCAL)
    steps = by_id(event)
    assert steps["join"].stop is None
    assert steps["after"].output == {"output": "B"}


async def test_join_any_stops_when_no_path_reaches_it(http: httpx.AsyncClient) -> None:
    flow = spec(
        router_of(path("Paid", ["f"], PAID)),
        filter.Config(id="f", name="Only EU", conditions=[cond("{{node-1.region}}", "equals", "EU")]),
        join.Config(id="join", name="Join", router="router", wait="any"),
        upper("after", "x"),
    )
    event = await execute(flow, run({"paid": "yes", "region": "US"}), http=http, guard=LOCAL)
    assert event.status == "SUCCESS"
    assert (by_id(event)["join"].stop or "").startswith("No path reached the join")
    assert "after" not in by_id(event)


async def test_an_error_on_a_path_ends_the_run_after_the_other_paths_current_step(
    http: httpx.AsyncClient, recorded: list[tuple[str, str, float]]
) -> None:
    flow = spec(
        router_of(path("Bad", ["bad"], PAID), path("Good", ["g1", "g2"], BIG)),
        fake("bad", "boom"),
        fake("g1", "one"),
        fake("g2", "two"),
        join.Config(id="join", name="Join", router="router"),
        upper("after", "x"),
    )
    event = await execute(flow, run({"paid": "yes", "total": 250}), http=http, guard=LOCAL)
    steps = by_id(event)
    assert event.status == "ERROR"
    assert steps["bad"].status == "ERROR" and steps["bad"].error == "boom failed" and steps["bad"].path == "router/Bad"
    assert steps["g1"].status == "SUCCESS"  # was running when the other path failed: it finished
    assert "g2" not in steps and "join" not in steps and "after" not in steps


async def test_empty_path_and_router_without_join(http: httpx.AsyncClient) -> None:
    flow = spec(
        router_of(path("Direct", [], PAID), path("Work", ["w"], BIG)),
        upper("w", "w"),
        join.Config(id="join", name="Join", router="router"),
        upper("after", "{{join.Work.output}}"),
    )
    event = await execute(flow, run({"paid": "yes", "total": 250}), http=http, guard=LOCAL)
    assert by_id(event)["join"].output == {"Direct": {}, "Work": {"output": "W"}}
    assert by_id(event)["after"].output == {"output": "W"}

    ends = spec(router_of(path("A", ["a"], PAID), path("B", ["b"], BIG)), upper("a", "a"), upper("b", "b"))
    event = await execute(ends, run({"paid": "yes", "total": 1}), http=http, guard=LOCAL)
    assert [(s.step_id, s.status) for s in event.steps] == [("router", "SUCCESS"), ("a", "SUCCESS"), ("b", "SKIPPED")]


async def test_paths_run_per_item_after_an_iterator(http: httpx.AsyncClient) -> None:
    flow = spec(
        iterator.Config(id="each", name="Each", input="{{node-1.lines}}"),
        router.Config(
            id="router",
            name="Router",
            paths=[path("Big", ["b"], cond("{{each.qty}}", "greater_than", "5")), path("Small", ["s"], otherwise=True)],
        ),
        upper("b", "big {{each.sku}}"),
        upper("s", "small {{each.sku}}"),
        join.Config(id="join", name="Join", router="router", wait="any"),
    )
    lines = {"lines": [{"sku": "a", "qty": 9}, {"sku": "b", "qty": 1}]}
    event = await execute(flow, run(lines), http=http, guard=LOCAL)
    rows = [(s.step_id, s.status, s.item_index) for s in event.steps if s.step_id in ("b", "s")]
    assert rows == [("b", "SUCCESS", 0), ("s", "SKIPPED", 0), ("b", "SKIPPED", 1), ("s", "SUCCESS", 1)]
    joins = [s.output for s in event.steps if s.step_id == "join"]
    assert joins == [{"Big": {"output": "BIG A"}, "Small": None}, {"Big": None, "Small": {"output": "SMALL B"}}]


# --- the spec's rules ---------------------------------------------------------------------------
def refused(*steps: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        spec(*steps)
    return str(caught.value)


def test_spec_rules_for_paths() -> None:
    two = router_of(path("A", ["a"], PAID), path("B", ["b"], BIG))
    j = join.Config(id="join", name="Join", router="router")
    assert "must follow it, path after path" in refused(two, upper("b", "b"), upper("a", "a"), j)
    assert "is not in the flow" in refused(two, upper("a", "a"), j)
    wait = delay.DelayStep(id="b", name="Wait", mode="for", amount=1, unit="minutes")
    assert "a delay cannot be inside a path" in refused(two, upper("a", "a"), wait, j)
    inner = router_of(path("C", [], PAID)).model_copy(update={"id": "b"})
    assert "a router cannot be inside a path" in refused(two, upper("a", "a"), inner, j)
    assert "its router 'nope' is not a step before it" in refused(
        upper("x", "x"), join.Config(id="join", name="Join", router="nope")
    )
    assert "no join: its paths end the flow" in refused(two, upper("a", "a"), upper("b", "b"), upper("c", "c"))
    spec(two, upper("a", "a"), upper("b", "b"), j, upper("c", "c"))  # the right shape passes


def test_router_config_rules() -> None:
    with pytest.raises(ValidationError, match="two paths are named 'A'"):
        router_of(path("A", [], PAID), path("A", [], BIG))
    with pytest.raises(ValidationError, match="at most one otherwise path"):
        router_of(path("A", [], otherwise=True), path("B", [], otherwise=True))
    with pytest.raises(ValidationError, match="on two paths"):
        router_of(path("A", ["x"], PAID), path("B", ["x"], BIG))
    with pytest.raises(ValidationError, match="add at least one condition"):
        path("A", [])
    with pytest.raises(ValidationError, match="the otherwise path has no conditions"):
        path("A", [], PAID, otherwise=True)
    for bad in ("", "a.b", " lead", "x" * 41, "{{x}}"):
        with pytest.raises(ValidationError):
            path(bad, [], PAID)
    with pytest.raises(ValidationError):
        router_of(*(path(f"P{i}", [], PAID) for i in range(11)))
    assert router_of(*(path(f"P {i}", [], PAID) for i in range(10))).paths[9].name == "P 9"


@pytest.mark.integration
async def test_a_redelivered_run_does_not_repeat_the_calls_on_its_paths(nc: Any, echo: Any) -> None:
    """The step journal (real nats-server) keys each path step by its id: a redelivery replays them."""
    kv = await nc.jetstream().key_value(KV_STEPS)

    def call(step_id: str) -> api_call.Config:
        return api_call.Config(
            id=step_id, name=step_id, url=echo.base + "/echo", body=[KeyValue(key="s", value=step_id)]
        )

    flow = spec(
        router_of(path("Paid", ["a"], PAID), path("Big", ["b"], BIG), path("Rest", ["c"], otherwise=True)),
        call("a"),
        call("b"),
        call("c"),
        join.Config(id="join", name="Join", router="router"),
        upper("after", "{{join.Paid.body.id}}-{{join.Big.body.id}}-{{join.Rest}}"),
    )
    request = run({"paid": "yes", "total": 250}).model_copy(update={"run_id": secrets.token_hex(16)})
    async with httpx.AsyncClient(timeout=5) as http:
        first = await execute(
            flow, request, http=http, guard=LOCAL, journal=StepJournal(kv, request.run_id, replay=False)
        )
        assert sorted(r.json()["s"] for r in echo.requests_to("/echo")) == ["a", "b"]
        journal = StepJournal(kv, request.run_id, replay=True)
        again = await execute(flow, request, http=http, guard=LOCAL, journal=journal)
    assert len(echo.requests_to("/echo")) == 2 and journal.recalled == 2
    assert isinstance(first, TaskEvent) and isinstance(again, TaskEvent)
    assert [(s.step_id, s.status, s.path) for s in again.steps] == [(s.step_id, s.status, s.path) for s in first.steps]
    assert by_id(again)["after"].output == {"output": "42-42-"}


async def test_a_delay_before_the_router_and_after_the_join_suspends_and_resumes(http: httpx.AsyncClient) -> None:
    flow = spec(
        delay.DelayStep(id="wait1", name="Wait", amount=5),
        router_of(path("Paid", ["pa"], PAID), path("Big", ["pb"], BIG)),
        upper("pa", "a"),
        upper("pb", "b"),
        join.Config(id="join", name="Join", router="router"),
        delay.DelayStep(id="wait2", name="Wait again", amount=5),
        upper("after", "{{join.Paid.output}}{{join.Big.output}}"),
    )
    request = run({"paid": "yes", "total": 250})
    first = await execute(flow, request, http=http, guard=LOCAL)
    assert isinstance(first, Suspended) and first.continuation.after_step == "wait1"
    resumed = RunRequest.model_validate_json(
        request.model_copy(update={"resume": first.continuation}).model_dump_json()
    )
    second = await execute(flow, resumed, http=http, guard=LOCAL)
    assert isinstance(second, Suspended) and second.continuation.after_step == "wait2"
    assert second.continuation.outputs["join"] == {"Paid": {"output": "A"}, "Big": {"output": "B"}}
    resumed = RunRequest.model_validate_json(
        request.model_copy(update={"resume": second.continuation}).model_dump_json()
    )
    event = await execute(flow, resumed, http=http, guard=LOCAL)
    assert isinstance(event, TaskEvent) and event.status == "SUCCESS"
    assert [(s.step_id, s.path) for s in event.steps] == [
        ("wait1", None), ("router", None), ("pa", "router/Paid"), ("pb", "router/Big"), ("join", None),
        ("wait2", None), ("after", None),
    ]  # fmt: skip
    assert by_id(event)["after"].output == {"output": "AB"}


async def test_an_exception_in_a_path_is_raised_after_the_other_paths_finished(
    http: httpx.AsyncClient, recorded: list[tuple[str, str, float]], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(config: Any, ctx: StepContext) -> Outcome:
        raise RuntimeError("a bug")

    monkeypatch.setitem(runner_steps.KINDS, "formatter", broken)
    flow = spec(router_of(path("A", ["bug"], PAID), path("B", ["slow"], BIG)), upper("bug", "x"), fake("slow", "s"))
    with pytest.raises(RuntimeError, match="a bug"):
        await execute(flow, run({"paid": "yes", "total": 250}), http=http, guard=LOCAL)
    assert [kind for kind, _id, _t in recorded] == ["start", "end"]  # the slow path was not left running


async def test_a_held_step_is_skipped_with_its_reason_and_ends_its_path(http: httpx.AsyncClient) -> None:
    """``hold`` (the api's evaluations): a step it names is not run, recorded SKIPPED with the reason; like a
    filter's stop it ends its path (or the run), and the run stays SUCCESS."""
    post = api_call.Config(id="post", name="Post", method="POST", url="http://127.0.0.1:9/never")
    ada = cond("{{node-1.name}}", "equals", "ada")
    flow = spec(
        upper("node-2", "{{node-1.name}}"),
        router_of(path("a", ["a1"], ada), path("b", ["post"], ada)),
        upper("a1", "a"),
        post,
    )
    seen: list[str] = []

    def hold(step: Any) -> str | None:
        seen.append(step.id)
        return f"held before {step.name}" if step.kind == "api_call" else None

    event = await execute(flow, run({"name": "ada"}), http=http, guard=LOCAL, hold=hold)
    assert isinstance(event, TaskEvent) and event.status == "SUCCESS"
    steps = by_id(event)
    assert steps["node-2"].output == {"output": "ADA"} and steps["a1"].status == "SUCCESS"
    assert steps["post"].status == "SKIPPED" and steps["post"].stop == "held before Post"
    assert steps["post"].path == "router/b" and steps["post"].output is None
    assert sorted(seen) == ["a1", "node-2", "post", "router"]
    # Without a hold the same step runs (and fails: nothing listens on port 9).
    event = await execute(flow, run({"name": "ada"}), http=http, guard=LOCAL)
    assert isinstance(event, TaskEvent) and by_id(event)["post"].status == "ERROR"
