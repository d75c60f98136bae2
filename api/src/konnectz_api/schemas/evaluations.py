"""Evaluations of a flow (``routes/evaluations.py``, docs/ai.md): example inputs, checks, a run's score.

The limits are :mod:`konnectz_contracts.limits`' ``EVAL_*``; a set or a check over one is refused with 422
and a message naming the limit.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from konnectz_contracts.limits import (
    EVAL_CASES_MAX,
    EVAL_CHECKS_MAX,
    EVAL_INPUT_MAX_BYTES,
    EVAL_PATTERN_MAX_CHARS,
    EVAL_VALUE_MAX_BYTES,
    MAX_JSON_DEPTH,
    TooDeep,
    check_depth,
)

CheckOp = Literal["equals", "contains", "matches", "exists", "between", "schema"]
StepId = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$")]


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _bounded(value: Any, limit: int, what: str) -> None:
    try:
        check_depth(value, MAX_JSON_DEPTH)
    except TooDeep as exc:
        raise ValueError(f"{what} is nested deeper than {exc.limit} levels") from None
    size = _json_bytes(value)
    if size > limit:
        raise ValueError(f"{what} is {size} bytes as JSON: at most {limit // 1024} KiB")


def _remote_ref(schema: Any) -> str | None:
    """The first ``$ref`` (or ``$dynamicRef``) of ``schema`` that points outside it (iteratively)."""
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("$ref", "$dynamicRef") and isinstance(item, str) and not item.startswith("#"):
                    return item
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
    return None


class EvalCheck(BaseModel):
    """One check on a step's output. ``op`` needs: ``value`` (equals, contains), ``pattern`` (matches),
    ``min`` and/or ``max`` (between), ``json_schema`` (schema); ``exists`` needs nothing."""

    model_config = ConfigDict(extra="forbid")

    step: StepId | None = Field(
        default=None, description="The node whose output is checked (node-2...); default: the last step that ran"
    )
    path: str = Field(
        default="",
        max_length=500,
        description="Where in the output, dotted: data.sentiment, items.0.id; empty: the whole output",
    )
    op: CheckOp
    value: Any = Field(default=None, description="equals: the expected value; contains: a text or list element")
    pattern: str | None = Field(
        default=None,
        max_length=EVAL_PATTERN_MAX_CHARS,
        description="matches: a regular expression searched in the text",
    )
    min: float | None = Field(default=None, description="between: the smallest number allowed")
    max: float | None = Field(default=None, description="between: the largest number allowed")
    json_schema: dict[str, Any] | None = Field(default=None, description="schema: a JSON Schema the value must match")

    @model_validator(mode="after")
    def _fits(self) -> EvalCheck:
        if self.op in ("equals", "contains"):
            if self.value is None and self.op == "contains":
                raise ValueError("a contains check needs a value")
            _bounded(self.value, EVAL_VALUE_MAX_BYTES, "the check's value")
        elif self.op == "matches":
            if not self.pattern:
                raise ValueError("a matches check needs a pattern")
            from konnectz_contracts.formats import check_pattern  # import-ok: the regex engine loads on first use

            try:
                check_pattern(self.pattern)
            except ValueError as exc:
                raise ValueError(f"the pattern is not a valid regular expression ({exc})") from None
        elif self.op == "between":
            if self.min is None and self.max is None:
                raise ValueError("a between check needs min, max or both")
            if self.min is not None and self.max is not None and self.min > self.max:
                raise ValueError("a between check's min is larger than its max")
        elif self.op == "schema":
            if self.json_schema is None:
                raise ValueError("a schema check needs json_schema")
            _bounded(self.json_schema, EVAL_VALUE_MAX_BYTES, "the check's JSON schema")
            outside = _remote_ref(self.json_schema)
            if outside is not None:
                raise ValueError(f"the check's JSON schema may refer only within itself (#...), not to {outside!r}")
            import jsonschema  # import-ok: loaded only for a schema check

            validator = jsonschema.validators.validator_for(self.json_schema, default=jsonschema.Draft202012Validator)
            try:
                validator.check_schema(self.json_schema)
            except jsonschema.SchemaError as exc:
                raise ValueError(f"the check's JSON schema is not valid: {exc.message}") from None
        return self


class EvalCase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    input: dict[str, Any] = Field(
        description=f"The trigger's output for this case (at most {EVAL_INPUT_MAX_BYTES // 1024} KiB as JSON)"
    )
    checks: list[EvalCheck] = Field(min_length=1, max_length=EVAL_CHECKS_MAX)

    @field_validator("input")
    @classmethod
    def _input_fits(cls, value: dict[str, Any]) -> dict[str, Any]:
        _bounded(value, EVAL_INPUT_MAX_BYTES, "the case's input")
        return value


class EvaluationSetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cases: list[EvalCase] = Field(max_length=EVAL_CASES_MAX, description=f"At most {EVAL_CASES_MAX} cases")
    threshold: float = Field(default=1.0, ge=0, le=1, description="The score a run must reach (default 1: all)")
    stop_before_effects: bool = Field(
        default=False,
        description="true: a case stops before a step with effects (API calls, app actions, data forwarding, "
        "approvals, delays and waits); Ask AI and the add-ons that only compute still run",
    )

    @field_validator("cases")
    @classmethod
    def _unique_names(cls, value: list[EvalCase]) -> list[EvalCase]:
        seen: set[str] = set()
        for case in value:
            if case.name in seen:
                raise ValueError(f"two cases are named {case.name!r}: each case needs its own name")
            seen.add(case.name)
        return value


class EvalLastRun(BaseModel):
    score: float
    passed: int
    total: int
    threshold: float
    passed_threshold: bool
    revision: int | None = Field(default=None, description="The revision run (null: the draft)")
    finished_at: datetime


class EvaluationSetOut(EvaluationSetIn):
    konnect_id: int
    updated_at: datetime | None = Field(default=None, description="null: the flow has no evaluations yet")
    last_run: EvalLastRun | None = None


class EvaluationRunIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    revision: int | Literal["draft"] | None = Field(
        default=None,
        description='A revision number, or "draft" (the saved draft, compiled); default: the live revision, '
        "else the draft",
    )
    threshold: float | None = Field(default=None, ge=0, le=1, description="Default: the set's threshold")

    @field_validator("revision")
    @classmethod
    def _revision(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and not 1 <= value < 2**31:
            raise ValueError("revision must be a revision number (1, 2, 3...) or 'draft'")
        return value


class EvalCheckResult(BaseModel):
    op: CheckOp
    step: str | None = Field(description="The node checked (the last step that ran when the check named none)")
    path: str
    passed: bool
    actual: Any = Field(default=None, description="The value found (cut to 2 KiB of JSON with a note)")
    reason: str | None = Field(default=None, description="Why the check failed")


class EvalCaseResult(BaseModel):
    name: str
    passed: bool
    status: str = Field(
        description="The run's end: SUCCESS, ERROR, STOPPED (a filter or stop before effects), "
        "WAITING (a delay or wait), TIMEOUT, NOT_RUN"
    )
    error: str | None = None
    seconds: float
    checks: list[EvalCheckResult]


class EvaluationRunOut(BaseModel):
    konnect_id: int
    revision: int | None = Field(description="The revision run (null: the draft)")
    score: float = Field(description="passed / total (0 when the set has no case)")
    passed: int
    total: int
    threshold: float
    passed_threshold: bool
    seconds: float
    cases: list[EvalCaseResult]
