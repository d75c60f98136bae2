"""What a step's ``run`` gets and returns (the config models are :mod:`konnectz_contracts.model` and
:mod:`konnectz_contracts.steps`).

- :class:`StepContext`: what a step's ``run`` gets besides its config.
- :class:`Outcome`: what a step's ``run`` returns; the engine turns it into a
  :class:`~konnectz_contracts.events.StepResult` and decides what runs next.
- :data:`RESPONDER`: the webhook answer of the run being executed (a :class:`Responder`, set by the
  worker for a run whose caller waits, :mod:`konnectz_contracts.responses`); a Respond step sends it.
- :data:`FLOW_CALLS`: what starts another flow's run for a Call a Flow step (a :class:`FlowStarter`, set
  by the worker for the run: :class:`konnectz_runner.work.subflows.FlowCalls`); None in Test & Review.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

import httpx

from konnectz_contracts.errors import ConnectFailed, HttpFailed, StepError, TimedOut
from konnectz_contracts.model import utcnow
from konnectz_contracts.on_error import Failure
from konnectz_contracts.responses import WebhookReply
from konnectz_runner.apps import Budgets, NetGuard

__all__ = [
    "FLOW_CALLS",
    "RESPONDER",
    "CallRefused",
    "FlowStarter",
    "Outcome",
    "Responder",
    "StepContext",
    "SubStepInDoubt",
    "SubSteps",
    "failure_kind",
    "failure_of",
]


class Responder(Protocol):
    """Answers the webhook request that started the run (once: the first answer wins)."""

    async def send(self, reply: WebhookReply) -> str | None:
        """Send ``reply``; None when it was sent, else why not (answered already, nobody waits)."""
        ...


class SubSteps(Protocol):
    """The journal of the parts of one step (an Agent's model replies and tool calls), each by its own
    name: a redelivered run finds what its step finished before (``engine/journal.py``)."""

    async def recall(self, name: str) -> Any:
        """The value recorded for ``name`` in an earlier delivery, or None. A tool call that started but
        has no value (its runner stopped meanwhile) raises :class:`SubStepInDoubt` under the ``fail``
        policy, or :class:`~konnectz_runner.engine.journal.StepBusy` while it may still run elsewhere."""
        ...

    async def begin(self, name: str) -> None:
        """Mark ``name`` as started, before its effect can happen."""
        ...

    async def record(self, name: str, value: Any) -> None:
        """Store ``name``'s value (JSON), durably, before the step goes on."""
        ...


class SubStepInDoubt(Exception):
    """A part of a step with effects started in an earlier delivery and has no result: not run again."""


#: The run's :class:`Responder` (None: nobody waits for an answer). A context variable, not a
#: :class:`StepContext` field: the worker sets it for the run's task, and the steps of paths (tasks
#: started from it) see the same one.
RESPONDER: ContextVar[Responder | None] = ContextVar("konnectz_responder", default=None)


class CallRefused(Exception):
    """A called flow's run was not started: ``message`` says why; ``transient`` when trying again may
    work (the api did not answer), so the step's retry policy applies."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient


class FlowStarter(Protocol):
    """Starts the run of a called flow for the run being executed (docs/sub-flows.md)."""

    async def start(
        self, flow_id: int, arguments: dict[str, Any], *, step_id: str, wait: bool, item_index: int | None = None
    ) -> dict[str, Any]:
        """Start it; ``{"run_id", "flow_id", "flow_name"}``. Raises :class:`CallRefused`."""
        ...

    async def call(self, flow_id: int, arguments: dict[str, Any], *, step_id: str, seconds: float) -> dict[str, Any]:
        """Start it (its run id derived from this run and ``step_id``: started once however often this is
        asked) and wait for its end, ``seconds`` at most, holding the worker's slot (an Agent's sub-flow tool).
        The called run's result (:func:`konnectz_runner.work.subflows.callee_result`). Raises
        :class:`CallRefused`, and :class:`TimeoutError` when it did not end in time."""
        ...


#: The run's :class:`FlowStarter` (None: calling flows is not possible here, e.g. Test & Review).
FLOW_CALLS: ContextVar[FlowStarter | None] = ContextVar("konnectz_flow_calls", default=None)


@dataclass
class StepContext:
    """What a step may use. ``outputs`` maps node ids (trigger and earlier steps) to their outputs."""

    outputs: dict[str, Any]
    http: httpx.AsyncClient
    guard: NetGuard
    run_id: str = ""
    konnect_id: int = 0
    owner_id: int = 0
    timezone: str = "UTC"
    now: Callable[[], datetime] = utcnow
    warnings: list[str] = field(default_factory=list)
    # The largest response body an outbound call may read (Test & Review uses a smaller one).
    max_response_bytes: int = 10 * 1024 * 1024
    # Opens sealed step secrets: (konnect id, sealed values) -> [(plain value, origin typed for)].
    # None: the api's broker (:func:`konnectz_runner.apps.step_secrets.broker_step_secrets`).
    open_secrets: Callable[[int, list[str]], Awaitable[list[tuple[str, str | None]]]] | None = None
    # A join's input (set by the engine, or by Test & Review): path name -> the output of the path's
    # last step ({} for an empty path, None for a path that was skipped or stopped).
    path_results: dict[str, Any] | None = None
    # rate budgets: the buckets shared by every runner process (None: spaced within this process only).
    budgets: Budgets | None = None
    # on_error: the Idempotency-Key a step with retries sends on every attempt (the same each time, so
    # the other side can tell a retry from a new request); None: the step has no retries.
    idempotency_key: str | None = None
    # The journal of this step's parts (an Agent's model replies and tool calls); None: not journaled
    # (Test & Review, or a run without a journal).
    substeps: SubSteps | None = None
    # Whether steps may read and keep memory (an Agent's conversation); Test & Review does not.
    remember: bool = True
    # After an iterator: the index of the item this pass is for (None before the iterator).
    item_index: int | None = None


@dataclass
class Outcome:
    """The result of one step.

    - ``status`` ERROR with ``error`` ends the run as ERROR.
    - ``stop`` (a filter that did not pass) ends the run without error; the reason is logged.
    - ``items`` (an iterator) makes the following steps run once per item.
    - ``resume_at`` (a delay) suspends the run until then; the following steps run after it.
    - ``waited_seconds``/``wait_reason``: the step waited for its app account's rate budget.
    - ``failure``, ``status_code``, ``retry_after``: what kind of failure an ERROR was (the step's
      retry policy decides by it: :mod:`konnectz_contracts.on_error`), its HTTP status, and the
      seconds the other side's ``Retry-After`` asked for.
    """

    status: Literal["SUCCESS", "ERROR"] = "SUCCESS"
    output: Any = None
    input: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    stop: str | None = None
    items: list[Any] | None = None
    resume_at: datetime | None = None
    # rate budgets: seconds the step waited for its app account's budget, and the task log's line for it.
    waited_seconds: float | None = None
    wait_reason: str | None = None
    failure: Failure | None = None
    status_code: int | None = None
    retry_after: float | None = None
    # on_error.continue_run: the step failed, and the run goes on with its error as its output
    continued: bool = False

    @classmethod
    def failed(
        cls,
        error: str,
        *,
        input: dict[str, Any] | None = None,
        failure: Failure = "other",
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> Outcome:
        return cls(
            status="ERROR",
            error=error,
            input=input or {},
            failure=failure,
            status_code=status_code,
            retry_after=retry_after,
        )

    @classmethod
    def from_error(cls, exc: StepError, *, input: dict[str, Any] | None = None, output: Any = None) -> Outcome:
        """The ERROR outcome of ``exc``, its kind of failure told by its class."""
        outcome = cls.failed(str(exc), input=input, **failure_of(exc))
        outcome.output = output
        return outcome


def failure_kind(status: int) -> Failure:
    """The kind of failure an HTTP error status is."""
    if status == 429:
        return "rate_limited"
    return "server" if status >= 500 else "client"


def failure_of(exc: StepError) -> dict[str, Any]:
    """``failure``, ``status_code`` and ``retry_after`` of a step error, for :meth:`Outcome.failed`."""
    if isinstance(exc, HttpFailed):
        return {"failure": failure_kind(exc.status), "status_code": exc.status, "retry_after": exc.retry_after}
    if isinstance(exc, ConnectFailed):
        return {"failure": "connection"}
    if isinstance(exc, TimedOut):
        return {"failure": "timeout"}
    return {"failure": "other"}
