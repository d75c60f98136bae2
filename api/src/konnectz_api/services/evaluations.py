"""Evaluations: a flow's example inputs run headless against a revision, each case's checks judged, a score.

A run (:func:`run_evaluation`) takes the flow spec of a revision (default: the live one, else the saved
draft compiled by the publishing compiler) and runs the whole flow once per case with the runner's own
engine (:func:`konnectz_runner.engine.execute`), in this process: the trigger's output is the case's
``input``; no run is stored in JetStream, no task log is written and no task of the plan's quota is
used. Steps with effects run for real, through the runner's outbound guard (an API Call is sent, an app
action acts); a set with ``stop_before_effects`` stops each case before the first of them instead
(:data:`NO_EFFECTS` still run: Ask AI and the add-ons that only compute). Each case is bounded by
:data:`~konnectz_contracts.limits.EVAL_CASE_SECONDS` and the whole run by
:data:`~konnectz_contracts.limits.EVAL_RUN_SECONDS` (cases left when it runs out are NOT_RUN and fail);
an account runs at most :data:`~konnectz_contracts.limits.EVAL_RUNS_PER_ACCOUNT` evaluations at once
(a lease on the set's row, counted under the lock of the owner's row, so the bound holds across api
processes and a run whose process died frees its place when its lease ends).

A case passes when its run did not end in an error or a timeout and every check passes. A check reads
one step's output (default: the last step that ran and has an output) at a dotted path, and is one of
``equals``, ``contains``, ``matches`` (the ``regex`` engine, with a timeout), ``exists``, ``between``
(a number within min and max) and ``schema`` (valid against a JSON Schema).

Nothing here waits on the database on the event loop (:func:`konnectz_api.db.run_db`), and no
transaction is open while a case runs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import regex
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from konnectz_api.compile.flow import CompileError, compile_flow
from konnectz_api.core.config import Settings
from konnectz_api.crud import revisions as revision_crud
from konnectz_api.crud.users import user_timezone
from konnectz_api.db import run_db
from konnectz_api.errors import NotFound, TooManyRequests, Unprocessable
from konnectz_api.models import EvaluationSet, Konnect, User
from konnectz_api.schemas.evaluations import (
    EvalCase,
    EvalCaseResult,
    EvalCheck,
    EvalCheckResult,
    EvalLastRun,
    EvaluationRunIn,
    EvaluationRunOut,
    EvaluationSetIn,
    EvaluationSetOut,
)
from konnectz_api.services.publishing import display_name
from konnectz_api.services.review import owned_konnect
from konnectz_contracts.events import RunRequest, StepResult
from konnectz_contracts.limits import (
    EVAL_CASE_SECONDS,
    EVAL_RUN_SECONDS,
    EVAL_RUNS_PER_ACCOUNT,
)
from konnectz_contracts.spec import FlowSpec
from konnectz_runner.apps import NetGuard, guarded_transport
from konnectz_runner.engine import PURE_KINDS, Suspended, execute

__all__ = [
    "CASE_CONCURRENCY",
    "NO_EFFECTS",
    "get_set",
    "judge",
    "run_evaluation",
    "save_set",
]

log = logging.getLogger(__name__)

#: Step kinds a set with ``stop_before_effects`` still runs: the engine's pure kinds (filter, formatter,
#: router...), Ask AI (a model call: what an evaluation is for) and the add-ons that only compute.
NO_EFFECTS = PURE_KINDS | {"ask_ai", "coupon", "generator", "hash", "json_parse"}
#: Cases of one run executed at the same time.
CASE_CONCURRENCY = 4
#: A ``matches`` check's search is stopped after this long (the pattern is refused as too slow).
REGEX_TIMEOUT_SECONDS = 1.0
#: Text a ``matches`` check searches: the first this many characters of the value.
MATCH_MAX_CHARS = 256 * 1024
#: A check's ``actual`` in the reply is cut to this many bytes of JSON.
ACTUAL_MAX_BYTES = 2048
#: A run's lease outlives its time bound by this much (a process that died frees its place after).
LEASE_MARGIN_SECONDS = 60
USER_AGENT = "Konnectz-Eval/0.1"
BUSY_RETRY_AFTER_SECONDS = 10


def _utcnow() -> datetime:
    return datetime.now(UTC)


# --- the set ------------------------------------------------------------------------------------


def _find(session: Session, konnect_id: int) -> EvaluationSet | None:
    return session.scalar(select(EvaluationSet).where(EvaluationSet.konnect_id == konnect_id))


def _out(konnect: Konnect, row: EvaluationSet | None) -> EvaluationSetOut:
    if row is None:
        return EvaluationSetOut(konnect_id=konnect.id, cases=[], threshold=1.0, stop_before_effects=False)
    return EvaluationSetOut(
        konnect_id=konnect.id,
        cases=[EvalCase.model_validate(c) for c in row.cases],
        threshold=row.threshold,
        stop_before_effects=row.stop_before_effects,
        updated_at=row.updated_at,
        last_run=EvalLastRun.model_validate(row.last_run) if row.last_run else None,
    )


def get_set(session: Session, user: User, konnect_id: int) -> EvaluationSetOut:
    """The flow's evaluation set (an empty one when it has none); 404 for a flow not the account's."""
    konnect = owned_konnect(session, user, konnect_id)
    return _out(konnect, _find(session, konnect.id))


def save_set(session: Session, user: User, konnect_id: int, body: EvaluationSetIn) -> EvaluationSetOut:
    """Replace the flow's evaluation set with ``body`` (the caller commits)."""
    konnect = owned_konnect(session, user, konnect_id)
    row = _find(session, konnect.id)
    cases = [c.model_dump(mode="json", exclude_none=True) for c in body.cases]
    if row is None:
        row = EvaluationSet(konnect_id=konnect.id, owner_id=konnect.owner_id, cases=cases)
        session.add(row)
    row.cases = cases
    row.threshold = body.threshold
    row.stop_before_effects = body.stop_before_effects
    row.updated_at = _utcnow()
    session.flush()
    return _out(konnect, row)


# --- the checks ---------------------------------------------------------------------------------

_MISSING = object()


def _at(value: Any, path: str) -> Any:
    """The value at dotted ``path`` (list elements by index); :data:`_MISSING` when there is none."""
    if not path:
        return value
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _same(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (1 equals 1.0), never a boolean equal to a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _shown(value: Any) -> Any:
    """``actual`` as the reply shows it: cut to :data:`ACTUAL_MAX_BYTES` of JSON, with a note."""
    if value is _MISSING:
        return None
    raw = json.dumps(value, ensure_ascii=False, default=str)
    if len(raw.encode("utf-8")) <= ACTUAL_MAX_BYTES:
        return value
    cut = raw.encode("utf-8")[:ACTUAL_MAX_BYTES].decode("utf-8", "ignore")
    return f"{cut}… (cut at {ACTUAL_MAX_BYTES} bytes of {len(raw.encode('utf-8'))})"


def _verdict(check: EvalCheck, actual: Any) -> str | None:
    """Why ``actual`` fails ``check`` (None: it passes)."""
    where = f"at {check.path!r}" if check.path else "in the output"
    if actual is _MISSING:
        return f"nothing {where}"
    if check.op == "exists":
        return None
    if check.op == "equals":
        return None if _same(actual, check.value) else f"expected {json.dumps(check.value, ensure_ascii=False)}"
    if check.op == "contains":
        if isinstance(actual, str) and isinstance(check.value, str):
            return None if check.value in actual else f"the text does not contain {check.value!r}"
        if isinstance(actual, list):
            return None if any(_same(x, check.value) for x in actual) else "the list has no such element"
        if isinstance(actual, dict) and isinstance(check.value, str):
            return None if check.value in actual else f"the object has no key {check.value!r}"
        return f"contains needs a text, a list or an object {where}, found {type(actual).__name__}"
    if check.op == "matches":
        assert check.pattern is not None
        try:
            found = _search(check.pattern, _text(actual))
        except TimeoutError:
            return f"the pattern took longer than {REGEX_TIMEOUT_SECONDS:g} s on this text"
        return None if found else f"the text does not match {check.pattern!r}"
    if check.op == "between":
        number = _number(actual)
        if number is None:
            return f"not a number {where}"
        if check.min is not None and number < check.min:
            return f"{number:g} is below {check.min:g}"
        if check.max is not None and number > check.max:
            return f"{number:g} is above {check.max:g}"
        return None
    if check.op == "schema":
        assert check.json_schema is not None
        try:
            error = _schema_error(check.json_schema, actual)
        except Exception as exc:  # a schema the validator cannot use (the set's checks refused most of them)
            return f"the JSON schema could not be used: {type(exc).__name__}: {str(exc)[:200]}"
        if error is None:
            return None
        at = "/".join(str(p) for p in error.absolute_path) or "the value"
        return f"does not match the JSON schema at {at}: {error.message}"
    return f"unknown check {check.op}"  # pragma: no cover (the schema allows no other op)


def _search(pattern: str, text: str) -> bool:
    """``pattern`` searched in ``text`` by the ``regex`` engine, bounded (TimeoutError past the bound)."""
    return regex.search(pattern, text[:MATCH_MAX_CHARS], timeout=REGEX_TIMEOUT_SECONDS) is not None


def _schema_error(schema: dict[str, Any], instance: Any) -> Any:
    """The best error of ``instance`` against ``schema`` (None: valid). The validator's ``pattern`` and
    ``patternProperties`` use the ``regex`` engine with a timeout, so a schema's pattern cannot hang a run."""
    import jsonschema  # import-ok: loaded only for a schema check
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, patrn: str, value: Any, _schema: Any) -> Any:
        if validator.is_type(value, "string"):
            try:
                if not _search(patrn, value):
                    yield ValidationError(f"{value!r} does not match {patrn!r}")
            except TimeoutError:
                yield ValidationError(f"the pattern {patrn!r} took longer than {REGEX_TIMEOUT_SECONDS:g} s")

    def pattern_properties(validator: Any, patterns: dict[str, Any], value: Any, _schema: Any) -> Any:
        if not validator.is_type(value, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, item in value.items():
                try:
                    found = _search(patrn, key)
                except TimeoutError:
                    yield ValidationError(f"the pattern {patrn!r} took longer than {REGEX_TIMEOUT_SECONDS:g} s")
                    return
                if found:
                    yield from validator.descend(item, subschema, path=key, schema_path=patrn)

    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    bounded = jsonschema.validators.extend(base, {"pattern": pattern, "patternProperties": pattern_properties})
    return jsonschema.exceptions.best_match(bounded(schema).iter_errors(instance))


def _outputs(results: list[StepResult], trigger: tuple[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """Each step's last output by id (after an iterator: its last item's) with the trigger's (the case's
    input), and the last step that ran with an output (the trigger when none did)."""
    outputs: dict[str, Any] = dict([trigger]) if trigger is not None else {}
    last: str | None = trigger[0] if trigger is not None else None
    for result in results:
        if result.status == "SUCCESS" and result.output is not None:
            outputs[result.step_id] = result.output
            last = result.step_id
    return outputs, last


def judge(check: EvalCheck, results: list[StepResult], trigger: tuple[str, Any] | None = None) -> EvalCheckResult:
    """One check on a case's step records (``trigger``: the trigger's id and output, the case's input)."""
    outputs, last = _outputs(results, trigger)
    step = check.step or last
    if step is None or step not in outputs:
        ran = any(r.step_id == step for r in results)
        why = (
            "no step ran with an output"
            if step is None
            else f"step {step} " + ("has no output" if ran else "did not run")
        )
        return EvalCheckResult(op=check.op, step=step, path=check.path, passed=False, reason=why)
    actual = _at(outputs[step], check.path)
    reason = _verdict(check, actual)
    return EvalCheckResult(
        op=check.op, step=step, path=check.path, passed=reason is None, actual=_shown(actual), reason=reason
    )


# --- a run --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Prepared:
    konnect_id: int
    set_id: int
    spec: FlowSpec
    revision: int | None
    cases: list[EvalCase]
    threshold: float
    stop_before_effects: bool


def _spec_of(session: Session, konnect: Konnect, user: User, revision: int | str | None) -> tuple[FlowSpec, int | None]:
    """The spec a run uses and its revision number (None: the draft)."""
    if revision is None and konnect.status == "Published" and konnect.live_revision is not None:
        revision = konnect.live_revision
    if isinstance(revision, int):
        row = revision_crud.get(session, owner_id=konnect.owner_id, konnect_id=konnect.id, number=revision)
        if row is None:
            raise NotFound(f"Revision {revision} of konnect {konnect.id} not found")
        return FlowSpec.model_validate(row.spec), revision
    owner = konnect.owner_id
    try:
        spec = compile_flow(
            konnect.canvas_json,
            konnect_id=konnect.id,
            owner_id=owner,
            name=display_name(konnect),
            webhook_token=konnect.webhook_token,
            timezone=user_timezone(user),
            owns_flow=lambda other: (found := session.get(Konnect, other)) is not None and found.owner_id == owner,
        )
    except CompileError as exc:
        raise Unprocessable(f"The draft does not compile: {exc}", konnect_id=konnect.id) from exc
    return spec, None


def _prepare(session: Session, user: User, konnect_id: int, body: EvaluationRunIn, run_seconds: float) -> _Prepared:
    """Read the set and the spec, and take the run's lease (the per-account bound). One transaction."""
    konnect = owned_konnect(session, user, konnect_id)
    row = _find(session, konnect.id)
    if row is None or not row.cases:
        raise Unprocessable(
            f"Konnect {konnect.id} has no evaluation cases: add some (PUT .../evaluations) before running them",
            konnect_id=konnect.id,
        )
    spec, revision = _spec_of(session, konnect, user, body.revision)
    # The owner's row is the lock every evaluation of the account counts under (and the plan caps' lock).
    session.execute(select(User.id).where(User.id == konnect.owner_id).with_for_update())
    session.refresh(row)
    now = _utcnow()
    retry = {"Retry-After": str(BUSY_RETRY_AFTER_SECONDS)}
    if row.running_until is not None and row.running_until > now:
        raise TooManyRequests(
            f"An evaluation of konnect {konnect.id} is already running: wait for it to finish", headers=retry
        )
    running = session.scalar(
        select(func.count())
        .select_from(EvaluationSet)
        .where(EvaluationSet.owner_id == konnect.owner_id, EvaluationSet.running_until > now)
    )
    if int(running or 0) >= EVAL_RUNS_PER_ACCOUNT:
        raise TooManyRequests(
            f"At most {EVAL_RUNS_PER_ACCOUNT} evaluations of an account run at once: wait for one to finish",
            headers=retry,
        )
    row.running_until = now + timedelta(seconds=run_seconds + LEASE_MARGIN_SECONDS)
    return _Prepared(
        konnect_id=konnect.id,
        set_id=row.id,
        spec=spec,
        revision=revision,
        cases=[EvalCase.model_validate(c) for c in row.cases],
        threshold=body.threshold if body.threshold is not None else row.threshold,
        stop_before_effects=row.stop_before_effects,
    )


def _finish(session: Session, set_id: int, last_run: dict[str, Any] | None) -> None:
    row = session.get(EvaluationSet, set_id)
    if row is None:  # the flow was deleted meanwhile
        return
    row.running_until = None
    if last_run is not None:
        row.last_run = last_run


#: How the record of a step not run by ``stop_before_effects`` starts (its ``stop``).
HELD = "Evaluation: stopped before"


def _hold(step: Any) -> str | None:
    if step.kind in NO_EFFECTS:
        return None
    return f"{HELD} {step.name or step.id} ({step.kind}), a step with effects"


def _stopped(result: StepResult) -> bool:
    """A filter's stop, or a step held before its effects (not a path that was not chosen)."""
    if result.status == "SKIPPED":
        return (result.stop or "").startswith(HELD)
    return result.stop is not None


async def _case(
    prepared: _Prepared, case: EvalCase, http: httpx.AsyncClient, guard: NetGuard, seconds: float, too_long: str
) -> EvalCaseResult:
    """One case, stopped after ``seconds`` (``too_long`` says why then)."""
    started = time.perf_counter()
    run = RunRequest(
        run_id=f"eval-{uuid.uuid4().hex}",
        konnect_id=prepared.konnect_id,
        trigger_output=case.input,
        received_at=_utcnow(),
        source="test",
    )
    hold = _hold if prepared.stop_before_effects else None
    error: str | None = None
    results: list[StepResult] = []
    ended: Any = None
    checks: list[EvalCheckResult] = []
    try:
        async with asyncio.timeout(seconds):
            ended = await execute(prepared.spec, run, http=http, guard=guard, hold=hold)
            records = list(ended.continuation.steps) if isinstance(ended, Suspended) else list(ended.steps)
            # In a thread: a check's pattern may take up to its timeout; the event loop goes on meanwhile.
            checks = await asyncio.to_thread(_judge_all, case, records, (prepared.spec.trigger_id, case.input))
    except TimeoutError:
        status, error = "TIMEOUT", too_long
        if not checks:
            checks = [_unjudged(check) for check in case.checks]
    except Exception as exc:  # the engine or a check failed unexpectedly: this case fails, the run goes on
        log.exception("evaluation of konnect %s, case %r", prepared.konnect_id, case.name)
        status, error = "ERROR", f"The case could not run: {type(exc).__name__}"
        checks = [_unjudged(check) for check in case.checks]
    else:
        if isinstance(ended, Suspended):
            status, results = "WAITING", list(ended.continuation.steps)
        else:
            results = list(ended.steps)
            failed = next((r for r in results if r.status == "ERROR"), None)
            if ended.status == "ERROR":
                status, error = "ERROR", (failed.error if failed is not None else None) or "The run failed"
            elif any(_stopped(r) for r in results):
                status = "STOPPED"
            else:
                status = "SUCCESS"
    passed = error is None and all(c.passed for c in checks)
    return EvalCaseResult(
        name=case.name,
        passed=passed,
        status=status,
        error=error,
        seconds=round(time.perf_counter() - started, 3),
        checks=checks,
    )


def _judge_all(case: EvalCase, results: list[StepResult], trigger: tuple[str, Any]) -> list[EvalCheckResult]:
    return [judge(check, results, trigger) for check in case.checks]


def _unjudged(check: EvalCheck) -> EvalCheckResult:
    return EvalCheckResult(op=check.op, step=check.step, path=check.path, passed=False, reason="not judged")


def _not_run(case: EvalCase, run_seconds: float) -> EvalCaseResult:
    why = f"The run's time limit ({run_seconds:g} s) was reached before this case"
    return EvalCaseResult(name=case.name, passed=False, status="NOT_RUN", error=why, seconds=0.0, checks=[])


async def run_evaluation(
    session: Session,
    settings: Settings,
    user: User,
    konnect_id: int,
    body: EvaluationRunIn,
    *,
    run_seconds: float = EVAL_RUN_SECONDS,
) -> EvaluationRunOut:
    """Run the flow's cases (see the module); the score and each case's result. ``run_seconds`` bounds
    the whole run (the HTTP route's is under the request deadline)."""
    run_seconds = min(run_seconds, EVAL_RUN_SECONDS)
    prepared = await run_db(session, _prepare, user, konnect_id, body, run_seconds)
    started = time.perf_counter()
    last_run: dict[str, Any] | None = None
    try:
        deadline = time.monotonic() + run_seconds
        gate = asyncio.Semaphore(CASE_CONCURRENCY)
        guard = NetGuard(settings.allow_private_networks)
        async with httpx.AsyncClient(
            transport=guarded_transport(guard),
            timeout=EVAL_CASE_SECONDS,
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT},
        ) as http:

            async def one(case: EvalCase) -> EvalCaseResult:
                async with gate:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return _not_run(case, run_seconds)
                    if left < EVAL_CASE_SECONDS:
                        why = f"The run's time limit ({run_seconds:g} s) was reached while this case ran"
                        return await _case(prepared, case, http, guard, left, why)
                    why = f"The case took longer than {EVAL_CASE_SECONDS} s"
                    return await _case(prepared, case, http, guard, EVAL_CASE_SECONDS, why)

            results = await asyncio.gather(*(one(c) for c in prepared.cases))
        passed = sum(1 for r in results if r.passed)
        total = len(results)
        score = passed / total if total else 0.0
        out = EvaluationRunOut(
            konnect_id=prepared.konnect_id,
            revision=prepared.revision,
            score=round(score, 4),
            passed=passed,
            total=total,
            threshold=prepared.threshold,
            passed_threshold=score >= prepared.threshold,
            seconds=round(time.perf_counter() - started, 3),
            cases=list(results),
        )
        last_run = EvalLastRun(
            score=out.score,
            passed=passed,
            total=total,
            threshold=out.threshold,
            passed_threshold=out.passed_threshold,
            revision=out.revision,
            finished_at=_utcnow(),
        ).model_dump(mode="json")
        return out
    finally:
        await run_db(session, _finish, prepared.set_id, last_run)
