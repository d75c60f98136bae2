"""Evaluations: a flow's example inputs with checks, run headless against a revision (or the draft) with the
runner's engine, scored; stop before steps with effects; limits refused with 422 naming them; another
account's flow is 404; the per-account bound (429); a slow case stopped at its bound, the cases after the
run's bound NOT_RUN."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import pytest
from sqlalchemy import select

from konnectz_api.core.config import get_settings
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import EvaluationSet, Konnect, User
from konnectz_api.schemas import EvalCheck, EvaluationRunIn
from konnectz_api.services.evaluations import judge, run_evaluation
from konnectz_contracts.events import StepResult
from konnectz_contracts.limits import EVAL_CASES_MAX, EVAL_RUNS_PER_ACCOUNT
from konnectz_devstack import testing
from konnectz_devstack.fake_apps import JsonHandler, LocalServer

K = "/api/v1/konnects"


class _Echo(JsonHandler):
    """Answers each POST with its path and JSON body; /slow answers after SLOW seconds."""

    received: ClassVar[list[str]] = []
    lock = threading.Lock()
    SLOW = 4.0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with _Echo.lock:
            _Echo.received.append(self.path)
        if self.path.startswith("/slow"):
            time.sleep(self.SLOW)
        try:
            self._reply(200, {"path": self.path, "json": body})
        except BrokenPipeError:  # the evaluation stopped waiting (its bound)
            pass


@pytest.fixture(scope="module")
def echo() -> Any:
    server = LocalServer(_Echo, request_queue_size=32)
    yield server
    server.stop()


def _canvas(url: str) -> dict[str, Any]:
    return testing.webhook_canvas(url, body=[{"key": "n", "value": "{{node-1.n}}"}])


def _flow(client, api, url: str) -> tuple[dict[str, str], int]:
    headers = api.new_user()
    saved = api.save_konnect(headers, _canvas(url))
    assert saved.status_code == 200, saved.text
    return headers, saved.json()["konnect_id"]


def _case(name: str, n: Any, *checks: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "input": {"n": n}, "checks": list(checks)}


def _put(client, headers, konnect_id: int, cases: list[dict[str, Any]], **options: Any) -> Any:
    return client.put(f"{K}/{konnect_id}/evaluations", json={"cases": cases, **options}, headers=headers)


def _result(when: str, output: Any, status: str = "SUCCESS") -> StepResult:
    now = datetime.now(UTC)
    return StepResult(step_id=when, name=when, status=status, started_at=now, finished_at=now, input={}, output=output)


def test_each_check_passes_and_fails_with_the_value_it_found() -> None:
    answer = {"answer": "The sentiment is POSITIVE.", "data": {"sentiment": "positive", "score": 0.93, "tags": ["a"]}}
    records = [_result("node-2", {"status": 200}), _result("node-3", answer)]

    def check(**kw: Any) -> Any:
        return judge(EvalCheck(**kw), records, ("node-1", {"n": 5}))

    assert check(op="equals", path="data.sentiment", value="positive").passed
    failed = check(op="equals", path="data.sentiment", value="negative")
    assert not failed.passed and failed.actual == "positive" and failed.step == "node-3"  # the last step by default
    assert check(op="equals", step="node-2", path="status", value=200.0).passed  # 200 equals 200.0
    assert not check(op="equals", path="data.score", value=True).passed  # a boolean never equals a number
    assert check(op="contains", path="answer", value="POSITIVE").passed
    assert check(op="contains", path="data.tags", value="a").passed
    assert not check(op="contains", path="data.tags", value="b").passed
    assert check(op="matches", path="answer", pattern=r"(?i)sentiment is positive").passed
    assert check(op="exists", path="data.tags.0").passed
    missing = check(op="exists", path="data.missing")
    assert not missing.passed and missing.reason == "nothing at 'data.missing'"
    assert check(op="between", path="data.score", min=0.9, max=1).passed
    low = check(op="between", path="data.score", min=0.95)
    assert not low.passed and low.reason == "0.93 is below 0.95"
    schema = {"type": "object", "required": ["sentiment"], "properties": {"sentiment": {"enum": ["positive"]}}}
    assert check(op="schema", path="data", json_schema=schema).passed
    bad = check(op="schema", path="data", json_schema={**schema, "required": ["reason"]})
    assert not bad.passed and "'reason' is a required property" in (bad.reason or "")
    assert check(op="equals", step="node-1", path="n", value=5).passed  # the trigger's output is the case's input
    never = check(op="exists", step="node-9")
    assert not never.passed and never.reason == "step node-9 did not run"
    # A pattern that backtracks catastrophically is stopped by the regex engine's timeout, not left to hang.
    long = [_result("node-2", {"text": "a" * 5000 + "!"})]
    started = time.monotonic()
    slow = judge(EvalCheck(op="matches", path="text", pattern=r"^(a|aa)+$"), long)
    assert not slow.passed and "took longer than 1 s" in (slow.reason or "")
    assert time.monotonic() - started < 30
    # So is a JSON schema's pattern (the validator's pattern keywords use the same bounded engine). The
    # engine's 1 s is its own running time: on a machine loaded 10 times over (load 20 on 2 cores) one
    # stopped search took 6 s of wall time, hence the wide bounds here; without a bound it would not end.
    started = time.monotonic()
    hostile = {"type": "object", "properties": {"text": {"type": "string", "pattern": "^(a|aa)+$"}}}
    slow = judge(EvalCheck(op="schema", json_schema=hostile), long)
    assert not slow.passed and "took longer than 1 s" in (slow.reason or ""), slow.reason
    assert time.monotonic() - started < 30
    started = time.monotonic()
    keys = {"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "number"}}}
    assert not judge(EvalCheck(op="schema", json_schema=keys), [_result("node-2", {"a" * 5000 + "!": 1})]).passed
    assert time.monotonic() - started < 30
    assert judge(EvalCheck(op="schema", path="data", json_schema={"properties": {"sentiment": {"pattern": "^pos"}}}),
                 records).passed  # fmt: skip
    # An actual value over 2 KiB is cut in the reply, with a note.
    big = judge(EvalCheck(op="equals", path="text", value="x"), long)
    assert isinstance(big.actual, str) and "cut at 2048 bytes" in big.actual


def test_a_set_is_saved_and_scored_against_the_live_revision_or_the_draft(client, api, echo) -> None:
    headers, konnect_id = _flow(client, api, echo.url + "/v1")
    empty = client.get(f"{K}/{konnect_id}/evaluations", headers=headers)
    assert empty.status_code == 200 and empty.json()["cases"] == [] and empty.json()["updated_at"] is None
    published = client.post(
        f"{K}/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": _canvas(echo.url + "/v1")},
        headers=headers,
    )
    assert published.status_code == 200 and published.json()["revision"] == 1, published.text
    # A pending draft calls another path: the live revision still calls /v1.
    saved = client.post(
        f"{K}/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": _canvas(echo.url + "/v2")},
        headers=headers,
    )
    assert saved.status_code == 200, saved.text
    status = {"op": "equals", "path": "status", "value": 200}
    cases = [
        _case("small", 5, status, {"op": "between", "path": "body.json.n", "min": 1, "max": 10}),
        _case("large", 50, status, {"op": "between", "path": "body.json.n", "min": 1, "max": 10}),
        _case("on v1", 7, {"op": "equals", "step": "node-2", "path": "body.path", "value": "/v1"}),
    ]
    put = _put(client, headers, konnect_id, cases, threshold=0.6)
    assert put.status_code == 200, put.text
    assert put.json()["threshold"] == 0.6 and [c["name"] for c in put.json()["cases"]] == ["small", "large", "on v1"]

    before = len(_Echo.received)
    live = client.post(f"{K}/{konnect_id}/evaluations/run", headers=headers)
    assert live.status_code == 200, live.text
    body = live.json()
    assert body["revision"] == 1 and body["total"] == 3 and body["passed"] == 2
    assert body["score"] == pytest.approx(2 / 3, abs=1e-3) and body["passed_threshold"] is True
    large = next(c for c in body["cases"] if c["name"] == "large")
    assert large["passed"] is False and large["status"] == "SUCCESS"
    assert large["checks"][1]["actual"] == 50 and large["checks"][1]["reason"] == "50 is above 10"
    assert sorted(_Echo.received[before:]) == ["/v1", "/v1", "/v1"]  # the steps with effects ran for real

    draft = client.post(
        f"{K}/{konnect_id}/evaluations/run", json={"revision": "draft", "threshold": 0.8}, headers=headers
    )
    assert draft.status_code == 200, draft.text
    drafted = draft.json()
    assert drafted["revision"] is None and drafted["passed"] == 1 and drafted["passed_threshold"] is False
    on_v1 = next(c for c in drafted["cases"] if c["name"] == "on v1")
    assert on_v1["checks"][0]["actual"] == "/v2"
    again = client.post(f"{K}/{konnect_id}/evaluations/run", json={"revision": 1}, headers=headers)
    assert again.status_code == 200 and again.json()["passed"] == 2

    shown = client.get(f"{K}/{konnect_id}/evaluations", headers=headers).json()
    assert shown["last_run"]["revision"] == 1 and shown["last_run"]["passed"] == 2
    with get_sessionmaker()() as s:
        row = s.scalar(select(EvaluationSet).where(EvaluationSet.konnect_id == konnect_id))
        assert row is not None and row.running_until is None  # the lease was given back
    # No task log: an evaluation is not a run.
    logs = client.get(f"{K}/{konnect_id}/task_logs", headers=headers)
    if logs.status_code == 200:
        assert not logs.json().get("task_logs"), logs.text


def test_a_set_may_stop_before_steps_with_effects(client, api, echo) -> None:
    headers, konnect_id = _flow(client, api, echo.url + "/effects")
    cases = [
        _case("input kept", 3, {"op": "equals", "path": "n", "value": 3}),  # the last step that ran: the trigger
        _case("needs the call", 3, {"op": "exists", "step": "node-2"}),
    ]
    assert _put(client, headers, konnect_id, cases, stop_before_effects=True).status_code == 200
    before = len(_Echo.received)
    run = client.post(f"{K}/{konnect_id}/evaluations/run", headers=headers)
    assert run.status_code == 200, run.text
    body = run.json()
    assert [(c["name"], c["passed"], c["status"]) for c in body["cases"]] == [
        ("input kept", True, "STOPPED"),
        ("needs the call", False, "STOPPED"),
    ]
    assert body["cases"][1]["checks"][0]["reason"] == "step node-2 has no output"
    assert body["score"] == 0.5 and body["passed_threshold"] is False  # the default threshold is 1
    assert len(_Echo.received) == before  # the API Call was not sent


def test_limits_and_bad_sets_are_refused_with_the_reason(client, api, echo) -> None:
    headers, konnect_id = _flow(client, api, echo.url + "/limits")
    check = {"op": "exists"}
    too_many = [_case(f"c{i}", i, check) for i in range(EVAL_CASES_MAX + 1)]
    r = _put(client, headers, konnect_id, too_many)
    assert r.status_code == 422 and "at most 200" in r.json()["message"], r.text
    big = [{"name": "big", "input": {"text": "x" * (64 * 1024)}, "checks": [check]}]
    r = _put(client, headers, konnect_id, big)
    assert r.status_code == 422 and "at most 64 KiB" in r.json()["message"], r.text
    for bad, words in (
        ({"op": "matches", "pattern": "(unclosed"}, "not a valid regular expression"),
        ({"op": "matches", "pattern": "a" * 1001}, "at most 1000 characters"),
        ({"op": "between", "min": 5, "max": 1}, "min is larger than its max"),
        ({"op": "schema", "json_schema": {"type": 12}}, "JSON schema is not valid"),
        ({"op": "guess"}, "op"),
        ({"op": "schema", "json_schema": {"$ref": "http://127.0.0.1:9/schema"}}, "may refer only within itself"),
        ({"op": "equals", "value": "x" * (33 * 1024)}, "at most 32 KiB"),
    ):
        r = _put(client, headers, konnect_id, [_case("bad", 1, bad)])
        assert r.status_code == 422 and words in r.json()["message"], (bad, r.text)
    # Each case within its limit, the whole set over the api's request size (KONNECTZ_MAX_REQUEST_BYTES, 2 MiB).
    heavy = [{"name": f"h{i}", "input": {"text": "x" * (60 * 1024)}, "checks": [check]} for i in range(40)]
    r = _put(client, headers, konnect_id, heavy)
    assert r.status_code == 413, r.text
    r = _put(client, headers, konnect_id, [_case("twice", 1, check), _case("twice", 2, check)])
    assert r.status_code == 422 and "two cases are named 'twice'" in r.json()["message"], r.text
    r = _put(client, headers, konnect_id, [{"name": "none", "input": {}, "checks": []}])
    assert r.status_code == 422, r.text
    deep: Any = {}
    for _ in range(70):
        deep = {"d": deep}
    r = _put(client, headers, konnect_id, [{"name": "deep", "input": deep, "checks": [check]}])
    assert r.status_code == 422 and "nested deeper" in r.text, r.text

    nothing = client.post(f"{K}/{konnect_id}/evaluations/run", headers=headers)
    assert nothing.status_code == 422 and "no evaluation cases" in nothing.json()["message"], nothing.text
    assert _put(client, headers, konnect_id, [_case("one", 1, check)]).status_code == 200
    gone = client.post(f"{K}/{konnect_id}/evaluations/run", json={"revision": 9}, headers=headers)
    assert gone.status_code == 404 and "Revision 9" in gone.json()["message"], gone.text
    for revision in (0, -1, "latest", 2**40):
        r = client.post(f"{K}/{konnect_id}/evaluations/run", json={"revision": revision}, headers=headers)
        assert r.status_code == 422, (revision, r.text)
    r = client.post(f"{K}/{konnect_id}/evaluations/run", json={"threshold": 1.5}, headers=headers)
    assert r.status_code == 422, r.text


def test_another_account_gets_404(client, api, echo) -> None:
    headers, konnect_id = _flow(client, api, echo.url + "/mine")
    assert _put(client, headers, konnect_id, [_case("one", 1, {"op": "exists"})]).status_code == 200
    other = api.new_user()
    for method, path, body in (
        ("GET", "", None),
        ("PUT", "", {"cases": []}),
        ("POST", "/run", {}),
    ):
        r = client.request(method, f"{K}/{konnect_id}/evaluations{path}", json=body, headers=other)
        assert r.status_code == 404 and f"Konnect {konnect_id} not found" in r.json()["message"], (method, r.text)
    assert len(client.get(f"{K}/{konnect_id}/evaluations", headers=headers).json()["cases"]) == 1


def test_an_account_runs_a_bounded_number_of_evaluations_at_once(client, api, echo) -> None:
    headers, first = _flow(client, api, echo.url + "/bound")
    one = [_case("one", 1, {"op": "exists"})]
    assert _put(client, headers, first, one).status_code == 200
    others = []
    for _ in range(EVAL_RUNS_PER_ACCOUNT):
        saved = api.save_konnect(headers, _canvas(echo.url + "/bound"))
        others.append(saved.json()["konnect_id"])
        assert _put(client, headers, others[-1], one).status_code == 200
    later = datetime.now(UTC) + timedelta(minutes=5)
    with get_sessionmaker()() as s:
        row = s.scalar(select(EvaluationSet).where(EvaluationSet.konnect_id == first))
        assert row is not None
        row.running_until = later
        s.commit()
    busy = client.post(f"{K}/{first}/evaluations/run", headers=headers)
    assert busy.status_code == 429 and "already running" in busy.json()["message"], busy.text
    assert busy.headers["Retry-After"] == "10"
    with get_sessionmaker()() as s:
        for konnect_id in others[:-1]:
            row = s.scalar(select(EvaluationSet).where(EvaluationSet.konnect_id == konnect_id))
            assert row is not None
            row.running_until = later
        s.commit()
    full = client.post(f"{K}/{others[-1]}/evaluations/run", headers=headers)
    assert full.status_code == 429 and f"At most {EVAL_RUNS_PER_ACCOUNT} evaluations" in full.json()["message"]
    with get_sessionmaker()() as s:  # a lease that ended frees its place (a process that died mid-run)
        row = s.scalar(select(EvaluationSet).where(EvaluationSet.konnect_id == first))
        assert row is not None
        row.running_until = datetime.now(UTC) - timedelta(seconds=1)
        s.commit()
    freed = client.post(f"{K}/{others[-1]}/evaluations/run", headers=headers)
    assert freed.status_code == 200 and freed.json()["passed"] == 1, freed.text


def test_a_slow_case_is_stopped_at_its_bound_and_the_run_at_its_own(client, api, echo) -> None:
    headers, konnect_id = _flow(client, api, echo.url + "/slow")
    cases = [_case(f"slow {i}", i, {"op": "exists", "step": "node-2"}) for i in range(5)]
    assert _put(client, headers, konnect_id, cases).status_code == 200
    with get_sessionmaker()() as s:
        konnect = s.get(Konnect, konnect_id)
        assert konnect is not None
        owner = s.get(User, konnect.owner_id)
        assert owner is not None
        started = time.monotonic()
        out = asyncio.run(
            run_evaluation(s, get_settings(), owner, konnect_id, EvaluationRunIn(revision="draft"), run_seconds=1.5)
        )
        took = time.monotonic() - started
    assert took < _Echo.SLOW, took  # the run did not wait for the slow server
    statuses = sorted(c.status for c in out.cases)
    assert statuses == ["NOT_RUN", "TIMEOUT", "TIMEOUT", "TIMEOUT", "TIMEOUT"], statuses
    timed_out = next(c for c in out.cases if c.status == "TIMEOUT")
    assert timed_out.error == "The run's time limit (1.5 s) was reached while this case ran" and not timed_out.passed
    not_run = next(c for c in out.cases if c.status == "NOT_RUN")
    assert not_run.error == "The run's time limit (1.5 s) was reached before this case"
    assert out.score == 0 and out.passed_threshold is False


def test_a_case_the_engine_cannot_run_fails_alone_without_a_500(client, api, echo, monkeypatch) -> None:
    from konnectz_api.services import evaluations

    headers, konnect_id = _flow(client, api, echo.url + "/broken")
    cases = [_case("one", 1, {"op": "exists"}), _case("two", 2, {"op": "exists"})]
    assert _put(client, headers, konnect_id, cases).status_code == 200
    real = evaluations.execute

    async def flaky(spec: Any, run: Any, **kw: Any) -> Any:
        if run.trigger_output == {"n": 1}:
            raise RuntimeError("a bug")
        return await real(spec, run, **kw)

    monkeypatch.setattr(evaluations, "execute", flaky)
    r = client.post(f"{K}/{konnect_id}/evaluations/run", headers=headers)
    assert r.status_code == 200, r.text
    by_name = {c["name"]: c for c in r.json()["cases"]}
    assert by_name["one"]["status"] == "ERROR" and by_name["one"]["error"] == "The case could not run: RuntimeError"
    assert by_name["one"]["checks"][0]["reason"] == "not judged"
    assert by_name["two"]["passed"] is True and r.json()["passed"] == 1
