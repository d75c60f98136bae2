"""Waits for a call: the signed resume token, the step and its decision, and KZ_WAITS decided once
(konnectz_runner.bus.waits) against a real NATS."""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from konnectz_contracts.events import STREAM_RUNS, Continuation, RunRequest, StepResult, WaitState, run_subject
from konnectz_contracts.spec import FlowSpec, WebhookTrigger
from konnectz_contracts.steps.wait import Config
from konnectz_contracts.waits import read_resume_token, resume_token, resume_url, wait_key
from konnectz_runner.bus import decide_call, load_revision, remember_revision, store_waiting, wait_buckets, wait_status
from konnectz_runner.bus import wait_on_delivery as on_delivery
from konnectz_runner.engine.steps import wait as wait_step

ENV = {"KONNECTZ_CREDENTIALS_KEY": "k" * 32, "KONNECTZ_WEBHOOK_BASE_URL": "https://hooks.example.com/"}
NOW = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def secret_of(konnect_id: int) -> str:
    return f"secret-{konnect_id}"


def test_a_token_names_its_run_and_step_and_refuses_forgeries() -> None:
    token = resume_token(secret_of(7), 7, "run-1", "node-3")
    assert read_resume_token(token, secret_of) == (7, "run-1", "node-3")
    payload, signature = token.split(".")
    flipped = signature[:-1] + ("0" if signature[-1] != "0" else "1")
    other = resume_token(secret_of(8), 8, "run-1", "node-3").split(".")[0]
    for bad in (f"{payload}.{flipped}", f"{other}.{signature}", payload, f"{payload}.", "x" * 700, "%%%.abc"):
        assert read_resume_token(bad, secret_of) is None
    assert read_resume_token(token, lambda _k: None) is None  # no key here: nothing verifies


def test_the_url_is_signed_with_the_konnects_key_under_the_webhook_base() -> None:
    url = resume_url(7, "run-1", "node-3", ENV)
    assert url is not None and url.startswith("https://hooks.example.com/resume/")
    assert resume_url(8, "run-1", "node-3", ENV) != url  # another konnect: another signature
    assert resume_url(7, "run-1", "node-3", {}) is None  # no key: no link


def _continuation(on_timeout: str, decided: str | None, body: dict[str, Any] | None = None) -> Continuation:
    record = StepResult(
        step_id="node-3", name="Wait", app="wait", status="SUCCESS", started_at=NOW, finished_at=NOW,
        input={}, output={"resume_url": "u"},
    )  # fmt: skip
    wait = WaitState(
        key="k", since=NOW, until=NOW + timedelta(hours=1), on_timeout=on_timeout,
        decided=decided, decided_at=NOW + timedelta(minutes=5), body=body,
    )  # fmt: skip
    return Continuation(
        after_step="node-3", resume_at=NOW, started_at=NOW, outputs={"node-3": {"resume_url": "u"}}, steps=[record],
        wait=wait,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("on_timeout", "decided", "goes_on", "output", "status"),
    [
        ("fail", "call", True, {"answer": "yes", "timed_out": False}, "SUCCESS"),
        ("continue", "timeout", True, {"timed_out": True}, "SUCCESS"),
        ("stop", "timeout", False, {"resume_url": "u"}, "SUCCESS"),
        ("fail", "timeout", False, {"resume_url": "u"}, "ERROR"),
        ("fail", "cancel", True, {"resume_url": "u"}, "SUCCESS"),  # the cancel check ends the run
    ],
)
def test_the_decision_becomes_the_steps_record(
    on_timeout: str, decided: str, goes_on: bool, output: dict[str, Any], status: str
) -> None:
    resume = _continuation(on_timeout, decided, {"answer": "yes"} if decided == "call" else None)
    outputs, results = dict(resume.outputs), list(resume.steps)
    assert wait_step.apply_decision(resume, outputs, results) is goes_on
    (record,) = results
    assert record.status == status and record.output == output
    if decided != "cancel":
        assert outputs["node-3"] == output if goes_on else True
        assert record.waited_seconds == 300.0
        assert f"resumed by {'a call' if decided == 'call' else 'its timeout'}" in (record.wait_reason or "")
        assert record.wait is not None  # the task log's structured record of the same
        assert record.wait.waiting_for == "a call to its resume URL" and record.wait.resumed_by == decided
        assert (record.wait.since, record.wait.until) == (NOW, NOW + timedelta(hours=1))
        assert record.wait.resumed_at == NOW + timedelta(minutes=5) and record.wait.decided_by is None
    else:
        assert record.wait is None
    if (on_timeout, decided) == ("stop", "timeout"):
        assert "No call to the resume URL came before the timeout" in (record.stop or "")


def test_an_approvals_record_names_who_decided() -> None:
    resume = _continuation("continue", "call", {"decision": "rejected", "approved": False, "decided_by": "b@x.io"})
    assert resume.wait is not None
    approval = resume.wait.model_copy(update={"waiting_for": "approval by a@x.io, b@x.io"})
    resume = resume.model_copy(update={"wait": approval})
    outputs, results = dict(resume.outputs), list(resume.steps)
    assert wait_step.apply_decision(resume, outputs, results) is True
    (record,) = results
    assert record.wait is not None
    assert (record.wait.waiting_for, record.wait.resumed_by, record.wait.decided_by) == (
        "approval by a@x.io, b@x.io",
        "call",
        "b@x.io",
    )
    assert "resumed by the decision of b@x.io" in (record.wait_reason or "")
    # the record goes through the wire format (extra fields forbidden) unchanged
    assert StepResult.model_validate_json(record.model_dump_json()).wait == record.wait


async def test_the_step_gives_its_url_and_timeout(make_ctx: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    ctx = make_ctx(now=NOW)
    ctx.konnect_id, ctx.run_id = 7, "run-1"
    outcome = await wait_step.run(Config(id="node-3", name="Wait", timeout=90, timeout_unit="minutes"), ctx)
    assert outcome.resume_at == NOW + timedelta(minutes=90)
    assert outcome.output["resume_url"] == resume_url(7, "run-1", "node-3")
    assert outcome.output["timeout_at"] == "2026-05-01T10:30:00Z"
    monkeypatch.delenv("KONNECTZ_CREDENTIALS_KEY")
    failed = await wait_step.run(Config(id="node-3", name="Wait", timeout=1), ctx)
    assert failed.status == "ERROR" and "No key to sign resume URLs" in (failed.error or "")
    ctx.run_id = "test-0123"  # Test & Review: nothing waits, no link (and no key needed)
    tested = await wait_step.run(Config(id="node-3", name="Wait", timeout=1), ctx)
    assert tested.status != "ERROR" and tested.output == {"timed_out": False} and tested.resume_at is None


def _waiting(konnect_id: int) -> RunRequest:
    run_id = secrets.token_hex(16)
    now = datetime.now(UTC)
    resume = _continuation("continue", None).model_copy(
        update={"wait": WaitState(key=wait_key(run_id, "node-3"), since=now, until=now + timedelta(hours=1))}
    )
    return RunRequest(run_id=run_id, konnect_id=konnect_id, trigger_output={"n": 1}, received_at=now, resume=resume)


async def _resumed_runs(js: Any, konnect_id: int) -> list[RunRequest]:
    """The runs published on the konnect's run subject (what the worker would receive), in order."""
    info = await js.stream_info(STREAM_RUNS, subjects_filter=run_subject(konnect_id))
    count = sum((info.state.subjects or {}).values())
    if count == 0:
        return []
    last = await js.get_last_msg(STREAM_RUNS, run_subject(konnect_id))
    assert count == 1, f"{count} runs published"
    return [RunRequest.model_validate_json(last.data)]


async def _no() -> bool:
    return False


@pytest.mark.integration
async def test_concurrent_calls_decide_once_and_the_timer_is_then_dropped(nc: Any) -> None:
    js = nc.jetstream()
    waits, _revisions = await wait_buckets(js)
    konnect = 800_000 + secrets.randbelow(10_000)
    waiting = _waiting(konnect)
    assert await store_waiting(js, waits, waiting) is False
    assert (await wait_status(waits, konnect, waiting.run_id, "node-3")).status == 200
    answers = await asyncio.gather(
        *(decide_call(js, waits, konnect, waiting.run_id, "node-3", {"answer": i}) for i in range(5))
    )
    assert sorted(a.status for a in answers) == [200, 410, 410, 410, 410]
    assert all("used already" in a.body["error"] for a in answers if a.status == 410)
    (resumed,) = await _resumed_runs(js, konnect)
    assert resumed.run_id == waiting.run_id and resumed.resume is not None and resumed.resume.wait is not None
    assert resumed.resume.wait.decided == "call" and resumed.resume.wait.body is not None
    # The worker takes the resumed run (first delivery): it goes on, and the entry says resumed.
    assert await on_delivery(js, waits, resumed, 1, _no) == resumed
    # A duplicate of it (first delivery again) is dropped; a redelivery (its worker died) goes on.
    assert await on_delivery(js, waits, resumed, 1, _no) is None
    assert await on_delivery(js, waits, resumed, 2, _no) is not None
    # The timeout's timer, if it fires anyway, is dropped.
    assert await on_delivery(js, waits, waiting, 1, _no) is None
    assert (await wait_status(waits, konnect, waiting.run_id, "node-3")).status == 410


@pytest.mark.integration
async def test_the_timer_decides_timeout_or_cancel_and_a_late_call_is_410(nc: Any) -> None:
    js = nc.jetstream()
    waits, _revisions = await wait_buckets(js)
    konnect = 810_000 + secrets.randbelow(10_000)
    for cancelled, decision in ((False, "timeout"), (True, "cancel")):
        waiting = _waiting(konnect)
        await store_waiting(js, waits, waiting)

        async def asked(answer: bool = cancelled) -> bool:
            return answer

        decided = await on_delivery(js, waits, waiting, 1, asked)
        assert decided is not None and decided.resume is not None and decided.resume.wait is not None
        assert decided.resume.wait.decided == decision
        late = await decide_call(js, waits, konnect, waiting.run_id, "node-3", {"answer": "late"})
        assert late.status == 410 and ("timed out" if decision == "timeout" else "cancelled") in late.body["error"]
        assert await on_delivery(js, waits, waiting, 2, asked) is not None  # its redelivery goes on
        assert await on_delivery(js, waits, waiting, 1, asked) is None  # a duplicate does not


@pytest.mark.integration
async def test_a_call_before_the_run_reaches_the_wait_resumes_it_at_once(nc: Any) -> None:
    js = nc.jetstream()
    waits, _revisions = await wait_buckets(js)
    konnect = 820_000 + secrets.randbelow(10_000)
    waiting = _waiting(konnect)
    early = await decide_call(js, waits, konnect, waiting.run_id, "node-3", {"answer": "early"})
    assert early.status == 202
    again = await decide_call(js, waits, konnect, waiting.run_id, "node-3", {"answer": "twice"})
    assert again.status == 410
    assert await store_waiting(js, waits, waiting) is True  # no timer: resumed at once
    (resumed,) = await _resumed_runs(js, konnect)
    assert resumed.resume is not None and resumed.resume.wait is not None
    assert resumed.resume.wait.body == {"answer": "early"}


@pytest.mark.integration
async def test_a_revision_is_kept_for_the_runs_that_resume_on_it(nc: Any) -> None:
    _waits, revisions = await wait_buckets(nc.jetstream())
    konnect = 830_000 + secrets.randbelow(10_000)
    spec = FlowSpec(
        konnect_id=konnect, owner_id=1, name="f", trigger_id="node-1", revision=3,
        trigger=WebhookTrigger(token=secrets.token_urlsafe(16)), steps=[Config(id="node-3", name="Wait", timeout=1)],
    )  # fmt: skip
    known: set[str] = set()
    await remember_revision(revisions, spec, known)
    assert await load_revision(revisions, konnect, 3) == spec
    assert await load_revision(revisions, konnect, 4) is None
    assert known == {f"{konnect}.3"}


async def test_an_approval_asks_the_api_then_waits(make_ctx: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from konnectz_contracts.errors import StepError
    from konnectz_contracts.steps.approval import Config as ApprovalConfig
    from konnectz_runner.engine.steps import approval

    asked: list[dict[str, Any]] = []

    async def accepted(**request: Any) -> dict[str, Any]:
        asked.append(request)
        return {"approvers": request["approvers"]}

    monkeypatch.setattr(approval, "request_approval", accepted)
    ctx = make_ctx({"node-1": {"who": "Boss@Example.com; team@example.com", "n": 7}}, now=NOW)
    ctx.konnect_id, ctx.run_id = 7, "run-1"
    config = ApprovalConfig(id="node-2", name="Approve", approvers="{{node-1.who}}", message="Order {{node-1.n}}",
                            timeout=2, timeout_unit="hours")  # fmt: skip
    outcome = await approval.run(config, ctx)
    assert outcome.resume_at == NOW + timedelta(hours=2)
    assert asked == [
        {"konnect_id": 7, "run_id": "run-1", "step_id": "node-2", "approvers": ["boss@example.com", "team@example.com"],
         "message": "Order 7", "until": NOW + timedelta(hours=2)},
    ]  # fmt: skip
    state = wait_step.wait_state(config, "run-1", NOW, NOW + timedelta(hours=2), outcome.output)
    assert state is not None and state.waiting_for == "approval by boss@example.com, team@example.com"

    async def refused(**_request: Any) -> dict[str, Any]:
        raise StepError("The approval request was refused (HTTP 403): Not an approver of this flow: x@y.z")

    monkeypatch.setattr(approval, "request_approval", refused)
    failed = await approval.run(config, ctx)
    assert failed.status == "ERROR" and "Not an approver" in (failed.error or "") and failed.resume_at is None


async def test_an_approval_tested_in_the_editor_mails_nobody(make_ctx: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from konnectz_contracts.steps.approval import Config as ApprovalConfig
    from konnectz_runner.engine.steps import approval

    async def never(**_request: Any) -> dict[str, Any]:
        raise AssertionError("Test & Review asked for an approval")

    monkeypatch.setattr(approval, "request_approval", never)
    ctx = make_ctx({}, now=NOW)
    ctx.konnect_id, ctx.run_id = 7, "test-0123"
    outcome = await approval.run(ApprovalConfig(id="node-2", name="A", approvers="a@b.c", timeout=1), ctx)
    assert outcome.resume_at is None
    assert outcome.output == {"decision": "approved", "approved": True, "decided_by": "a@b.c", "timed_out": False}
