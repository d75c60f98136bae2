"""Call a flow on the runner's side (konnectz_runner.work.subflows, the call_flow step and its decision)
against a real NATS: the called run's result, its caller's wait decided once however often the called run
ends (redeliveries), the decision turned into the step's output or error, the step's own refusals."""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from konnectz_contracts.events import (
    STREAM_RUNS,
    CallerLink,
    Continuation,
    RunRequest,
    StepResult,
    TaskEvent,
    WaitState,
    run_subject,
)
from konnectz_contracts.limits import CALL_RESULT_MAX_BYTES, MAX_CALL_DEPTH
from konnectz_contracts.on_error import OnError
from konnectz_contracts.steps.call_flow import Config
from konnectz_contracts.waits import wait_key
from konnectz_runner.bus import store_waiting, wait_buckets
from konnectz_runner.bus import wait_on_delivery as on_delivery
from konnectz_runner.engine import FLOW_CALLS, CallRefused
from konnectz_runner.engine.steps import call_flow as call_step
from konnectz_runner.engine.steps import wait as wait_step
from konnectz_runner.work.subflows import FlowCalls, called_run_id, callee_result, report_end, start_call

NOW = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def _step(step_id: str, app: str, output: Any, status: str = "SUCCESS", error: str | None = None) -> StepResult:
    return StepResult(
        step_id=step_id, name=step_id, app=app, status=status, started_at=NOW, finished_at=NOW,
        input={}, output=output, error=error,
    )  # fmt: skip


def _event(steps: list[StepResult], status: str = "SUCCESS", run_id: str = "called") -> TaskEvent:
    return TaskEvent(
        run_id=run_id, konnect_id=9, owner_id=1, konnect_name="Answer", status=status, started_at=NOW,
        finished_at=NOW, trigger_id="node-1", trigger_output={}, steps=steps,
    )  # fmt: skip


def test_the_result_is_the_respond_body_else_the_last_steps_output() -> None:
    responded = _event(
        [
            _step("node-2", "respond", {"sent": True, "result": {"a": 1}}),
            _step("node-3", "api_call", {"status": 200}),
        ]
    )
    assert callee_result(responded) | {} == {
        "status": "SUCCESS", "result": {"a": 1}, "error": None, "responded": True,
        "run_id": "called", "flow_id": 9, "flow_name": "Answer",
    }  # fmt: skip
    last = _event([_step("node-2", "api_call", {"status": 200}), _step("node-3", "filter", None, "SKIPPED")])
    assert callee_result(last)["result"] == {"status": 200} and callee_result(last)["responded"] is False
    failed = _event([_step("node-2", "api_call", None, "ERROR", "HTTP 500")], status="ERROR")
    assert callee_result(failed)["status"] == "ERROR" and callee_result(failed)["error"] == "HTTP 500"
    big = _event([_step("node-2", "api_call", {"x": "y" * CALL_RESULT_MAX_BYTES})])
    found = callee_result(big)
    assert found["status"] == "ERROR" and found["result"] is None and "hands back at most" in found["error"]


def test_the_called_run_id_is_the_same_for_every_delivery() -> None:
    assert called_run_id("run-1", "node-2") == called_run_id("run-1", "node-2")
    ids = {called_run_id("run-1", "node-2"), called_run_id("run-2", "node-2"), called_run_id("run-1", "node-3")}
    ids |= {called_run_id("run-1", "node-2", 0), called_run_id("run-1", "node-2", 1)}
    assert len(ids) == 5 and all(len(i) == 32 for i in ids)


def _continuation(run_id: str, body: dict[str, Any] | None, decided: str = "call") -> Continuation:
    record = _step("node-2", "call_flow", {"run_id": "called"})
    wait = WaitState(
        key=wait_key(run_id, "node-2"), since=NOW, until=NOW + timedelta(hours=1), on_timeout="fail",
        decided=decided, decided_at=NOW + timedelta(seconds=3), body=body, called_run="called",
    )  # fmt: skip
    return Continuation(after_step="node-2", resume_at=NOW, started_at=NOW, outputs={}, steps=[record], wait=wait)


def test_the_decision_becomes_the_call_steps_output_or_error() -> None:
    ok = {"status": "SUCCESS", "result": {"a": 1}, "run_id": "called", "flow_id": 9, "flow_name": "Answer"}
    resume = _continuation("r", ok)
    outputs: dict[str, Any] = {}
    results = list(resume.steps)
    assert wait_step.apply_decision(resume, outputs, results) is True
    assert outputs["node-2"]["result"] == {"a": 1} and results[0].status == "SUCCESS"
    assert "resumed by the end of the called run" in (results[0].wait_reason or "")

    failed = {**ok, "status": "ERROR", "result": None, "error": "HTTP 500"}
    step = Config(id="node-2", name="Call", flow_id=9)
    results = list(_continuation("r", failed).steps)
    assert wait_step.apply_decision(_continuation("r", failed), {}, results, step) is False
    assert results[0].status == "ERROR"
    assert results[0].error == "The called flow Answer (run called) ended ERROR: HTTP 500"

    going_on = step.model_copy(update={"on_error": OnError(continue_run=True)})
    outputs, results = {}, list(_continuation("r", failed).steps)
    assert wait_step.apply_decision(_continuation("r", failed), outputs, results, going_on) is True
    assert results[0].status == "ERROR" and results[0].continued is True
    assert outputs["node-2"]["error"]["message"].endswith("HTTP 500")

    results = list(_continuation("r", None, "timeout").steps)
    assert wait_step.apply_decision(_continuation("r", None, "timeout"), {}, results, step) is False
    assert "did not end before the timeout" in (results[0].error or "")


async def _published(js: Any, konnect_id: int) -> list[RunRequest]:
    info = await js.stream_info(STREAM_RUNS, subjects_filter=run_subject(konnect_id))
    count = sum((info.state.subjects or {}).values())
    if count == 0:
        return []
    last = await js.get_last_msg(STREAM_RUNS, run_subject(konnect_id))
    return [RunRequest.model_validate_json(last.data)] * count


async def test_the_callers_wait_is_decided_once_however_often_the_called_run_ends(nc: Any) -> None:
    js = nc.jetstream()
    waits, _revisions = await wait_buckets(js)
    konnect = 700_000 + secrets.randbelow(100_000)
    caller_run = secrets.token_hex(16)
    now = datetime.now(UTC)
    state = WaitState(key=wait_key(caller_run, "node-2"), since=now, until=now + timedelta(hours=1), called_run="c")
    resume = Continuation(after_step="node-2", resume_at=now, started_at=now, outputs={}, steps=[], wait=state)
    waiting = RunRequest(run_id=caller_run, konnect_id=konnect, trigger_output={}, received_at=now, resume=resume)
    assert await store_waiting(js, waits, waiting) is False
    link = CallerLink(konnect_id=konnect, run_id=caller_run, step_id="node-2", wait=True)
    called = RunRequest(run_id="c", konnect_id=9, trigger_output={}, received_at=now, source="call", called_by=link)
    event = _event([_step("node-2", "respond", {"sent": True, "result": "done"})], run_id="c")
    # The called run ends, and again (its redeliveries, concurrent ones too): its caller resumes once.
    await asyncio.gather(*(report_end(js, waits, called, event) for _ in range(4)))
    await report_end(js, waits, called, event)
    runs = await _published(js, konnect)
    assert len(runs) == 1, runs  # one resumed run (the same Msg-Id for every publish)
    (resumed,) = runs
    assert resumed.resume is not None and resumed.resume.wait is not None
    assert resumed.resume.wait.decided == "call" and resumed.resume.wait.body is not None
    assert resumed.resume.wait.body["result"] == "done"
    assert await on_delivery(js, waits, resumed, 1, _no) == resumed
    assert await on_delivery(js, waits, resumed, 1, _no) is None  # a duplicate delivery is dropped

    # A called run that ends before its caller stored its wait: the caller resumes as it suspends.
    early_run = secrets.token_hex(16)
    early_link = link.model_copy(update={"run_id": early_run})
    await report_end(js, waits, called.model_copy(update={"called_by": early_link}), event)
    early_wait = state.model_copy(update={"key": wait_key(early_run, "node-2")})
    early = waiting.model_copy(update={"run_id": early_run, "resume": resume.model_copy(update={"wait": early_wait})})
    assert await store_waiting(js, waits, early) is True
    # Going on at once: nothing is decided.
    await report_end(js, waits, called.model_copy(update={"called_by": link.model_copy(update={"wait": False})}), event)


async def _no() -> bool:
    return False


class _Api:
    """The api's side of kz.calls.start, answering as told (a real NATS subscription)."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.asked: list[bytes] = []

    async def handle(self, msg: Any) -> None:
        self.asked.append(msg.data)
        await msg.respond(self.reply)


async def test_the_step_starts_the_called_run_or_fails_saying_why(nc: Any, make_ctx: Any) -> None:
    from konnectz_contracts.calls import CALL_SUBJECT, CallStart, CallStarted
    from konnectz_contracts.spec import FlowSpec

    api = _Api(CallStarted(run_id="x", flow_id=9, flow_name="Answer").model_dump_json().encode())
    sub = await nc.subscribe(CALL_SUBJECT, cb=api.handle)
    try:
        steps = [{"kind": "call_flow", "id": "node-2", "name": "C", "flow_id": 9}]
        spec = FlowSpec.model_validate(
            {"konnect_id": 5, "owner_id": 1, "name": "Caller", "trigger_id": "node-1", "trigger": {"kind": "flow_call"}}
            | {"steps": steps}
        )
        above = CallerLink(konnect_id=4, run_id="top", step_id="node-9", depth=2)
        run = RunRequest(run_id="run-1", konnect_id=5, trigger_output={"e": "a@b.c"}, received_at=NOW, called_by=above)
        token = FLOW_CALLS.set(FlowCalls(nc, run, spec))
        try:
            ctx = make_ctx(now=NOW)
            ctx.outputs = {"node-1": {"e": "a@b.c", "n": 2}}
            config = Config(id="node-2", name="C", flow_id=9, inputs={"email": "{{node-1.e}}", "n": "{{node-1.n}}"})
            outcome = await call_step.run(config, ctx)
            assert outcome.status == "SUCCESS" and outcome.resume_at == NOW + timedelta(hours=1)
            assert outcome.output["run_id"] == "x" and outcome.output["flow_name"] == "Answer"
            asked = CallStart.model_validate_json(api.asked[-1])
            assert asked.arguments == {"email": "a@b.c", "n": 2}  # a whole reference keeps its type
            assert asked.caller.depth == 3 and asked.caller.wait is True and asked.caller.konnect_id == 5
            assert asked.run_id == called_run_id("run-1", "node-2")
            going = await call_step.run(config.model_copy(update={"mode": "go_on"}), ctx)
            assert going.resume_at is None and going.output == {"run_id": "x", "flow_id": 9, "flow_name": "Answer"}

            api.reply = (
                CallStarted(flow_id=9, error="Flow 9 does not exist or is not yours", status=404)
                .model_dump_json()
                .encode()
            )
            refused = await call_step.run(config, ctx)
            assert refused.status == "ERROR" and refused.error == "Flow 9 does not exist or is not yours"
            assert refused.failure == "other"  # not retried by a retry policy on connection failures
        finally:
            FLOW_CALLS.reset(token)
        outside = await call_step.run(config, make_ctx(now=NOW))  # Test & Review without FLOW_CALLS
        assert outside.status == "ERROR" and outside.error == call_step.NOT_HERE
    finally:
        await sub.unsubscribe()
    # Too deep: refused before asking; nobody answering: transient.
    deep = CallerLink(konnect_id=5, run_id="r", step_id="s", depth=MAX_CALL_DEPTH + 1)
    try:
        await start_call(nc, deep, 9, {}, run_id="z")
    except CallRefused as exc:
        assert "the limit is 5" in exc.message and not exc.transient
    else:
        raise AssertionError("not refused")
    try:
        await start_call(nc, deep.model_copy(update={"depth": 1}), 9, {}, run_id="z", wait_seconds=0.5)
    except CallRefused as exc:
        assert exc.transient and "did not answer" in exc.message
    else:
        raise AssertionError("not refused")


async def test_a_called_runs_respond_step_keeps_its_body_as_the_result(make_ctx: Any) -> None:
    from konnectz_contracts.steps.respond import Config as RespondConfig
    from konnectz_contracts.steps.respond import check_flow
    from konnectz_contracts.triggers.flow_call import FlowCallTrigger
    from konnectz_runner.engine import RESPONDER
    from konnectz_runner.engine.steps import respond
    from konnectz_runner.work.replies import CallReplies, run_replies

    step = RespondConfig(id="node-2", name="Answer", body_template='{"order": "{{node-1.n}}", "ok": true}')
    assert check_flow(FlowCallTrigger(), [step]) is None  # allowed after the flow-call trigger
    called = RunRequest(run_id="c", konnect_id=9, trigger_output={}, received_at=NOW, source="call")
    replies = run_replies(None, called)
    assert isinstance(replies, CallReplies)
    token = RESPONDER.set(replies)
    try:
        ctx = make_ctx({"node-1": {"n": 7}})
        first = await respond.run(step, ctx)
        assert first.output["sent"] is True and first.output["result"] == {"order": "7", "ok": True}
        again = await respond.run(step.model_copy(update={"body_template": "plain text"}), ctx)
        assert again.output["sent"] is False and "result" not in again.output  # the first answer wins
    finally:
        RESPONDER.reset(token)
    assert respond.result_of("plain text") == "plain text" and respond.result_of("") is None
    webhook_run = called.model_copy(update={"source": "webhook"})
    assert run_replies(None, webhook_run) is None  # nobody waits: the step only records


async def test_an_agents_call_waits_for_the_called_runs_end_holding_its_slot(nc: Any) -> None:
    """FlowCalls.call (an Agent's sub-flow tool): the called run starts once however often it is asked (the
    same derived run id), and its end (report_end, as the worker calls it) hands the result back."""
    from konnectz_contracts.calls import CALL_SUBJECT, CallStart, CallStarted
    from konnectz_contracts.spec import FlowSpec

    js = nc.jetstream()
    waits, _revisions = await wait_buckets(js)
    api = _Api(b"")
    started: list[CallStart] = []
    asked = asyncio.Event()

    async def handle(msg: Any) -> None:
        request = CallStart.model_validate_json(msg.data)
        started.append(request)
        asked.set()
        await msg.respond(CallStarted(run_id=request.run_id, flow_id=9, flow_name="Answer").model_dump_json().encode())

    api.handle = handle  # type: ignore[method-assign]
    sub = await nc.subscribe(CALL_SUBJECT, cb=api.handle)
    steps = [{"kind": "call_flow", "id": "node-2", "name": "C", "flow_id": 9}]
    spec = FlowSpec.model_validate(
        {"konnect_id": 5, "owner_id": 1, "name": "Caller", "trigger_id": "node-1", "trigger": {"kind": "flow_call"}}
        | {"steps": steps}
    )
    run = RunRequest(run_id=secrets.token_hex(16), konnect_id=5, trigger_output={}, received_at=NOW)
    calls = FlowCalls(nc, run, spec, waits=waits)
    try:
        waiting = asyncio.create_task(calls.call(9, {"email": "a@b.c"}, step_id="node-3/kz-1", seconds=20))
        await asyncio.wait_for(asked.wait(), 10)
        (request,) = started
        assert request.caller.wait is True and request.caller.step_id == "node-3/kz-1"
        assert request.run_id == called_run_id(run.run_id, "node-3/kz-1") and request.arguments == {"email": "a@b.c"}
        await asyncio.sleep(0.3)
        assert not waiting.done()  # it waits for the called run's end
        called = RunRequest(
            run_id=request.run_id, konnect_id=9, trigger_output={}, received_at=NOW, source="call",
            called_by=request.caller,
        )  # fmt: skip
        event = _event([_step("node-2", "respond", {"sent": True, "result": {"order": 7}})], run_id=request.run_id)
        await report_end(js, waits, called, event)
        body = await asyncio.wait_for(waiting, 10)
        assert body["status"] == "SUCCESS" and body["result"] == {"order": 7} and body["run_id"] == request.run_id
        # the result was read once: its entry is gone; a second call starts the same run id (stored once)
        assert await calls._result(wait_key(run.run_id, "node-3/kz-1")) is None

        # a called run that does not end in time: TimeoutError, within the bound
        begun = asyncio.get_running_loop().time()
        try:
            await calls.call(9, {}, step_id="node-3/kz-2", seconds=0.5)
        except TimeoutError as exc:
            assert "did not end within 0.5 s" in str(exc)
        else:
            raise AssertionError("no timeout")
        assert asyncio.get_running_loop().time() - begun < 3
        # without the KZ_WAITS bucket: refused, saying why
        try:
            await FlowCalls(nc, run, spec).call(9, {}, step_id="node-3/kz-3", seconds=1)
        except CallRefused as exc:
            assert "KZ_WAITS" in exc.message
        else:
            raise AssertionError("not refused")
    finally:
        await sub.unsubscribe()
