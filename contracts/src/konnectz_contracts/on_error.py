"""What a step does when it fails: retry it, and/or let the run go on (a step's ``on_error``).

Every step kind may carry an :class:`OnError` (``StepBase.on_error``; the editor's card sets it as
the node's ``data.onError``, :class:`CanvasOnError`). Without one, a failed step ends the run as
ERROR, as always.

- :class:`Retry`: the step runs again, up to ``attempts`` more times, after a delay that is
  ``fixed`` or ``exponential`` (``delay_seconds * 2 ** (n - 1)`` before retry n), capped at
  ``max_delay_seconds``, only for the failures named in ``on``:

  - ``connection``: no connection could be made (nothing was sent);
  - ``timeout``: the call or its response timed out;
  - ``server``: the other side answered 5xx;
  - ``rate_limited``: it answered 429.

  A ``Retry-After`` on the failed reply (a 429's or a 503's: seconds or an HTTP date) is waited for
  when it is longer than the backoff; one longer than ``MAX_RETRY_AFTER_SECONDS`` is not retried.

  Other failures (4xx other than 429, a refused address, a missing field, a step's own error) are
  never retried: they would fail the same way. Each failed attempt is in the step's task-log
  record (``StepResult.retries``). The retries wait inside the run (the worker keeps the run's
  message alive), so their total wait is bounded: at most :data:`MAX_RETRIES` retries of at most
  :data:`MAX_RETRY_DELAY_SECONDS` each, and never past the run's deadline.
- ``continue_run``: when the step still failed, the run goes on; the step's output is
  ``{"error": {"message": ..., "status": <HTTP status or null>}}`` and its status stays ERROR in the
  task log, so a Router after it can branch on ``{{node-N.error.status}}``; the run's status is
  SUCCESS when nothing else failed.

Pure models, no I/O; the runner's engine applies them (``konnectz_runner.engine``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "FAILURES",
    "MAX_RETRIES",
    "MAX_RETRY_AFTER_SECONDS",
    "MAX_RETRY_DELAY_SECONDS",
    "CanvasOnError",
    "Failure",
    "OnError",
    "Retry",
    "RetryOn",
    "compile_on_error",
    "retry_delay",
]

#: At most this many retries per step (so at most MAX_RETRIES + 1 attempts).
MAX_RETRIES = 10
#: One retry waits at most this long (backoff and Retry-After alike).
MAX_RETRY_DELAY_SECONDS = 300.0
#: A Retry-After longer than this is not waited for: the step fails with the 429.
MAX_RETRY_AFTER_SECONDS = MAX_RETRY_DELAY_SECONDS

RetryOn = Literal["connection", "timeout", "server", "rate_limited"]
#: What kind of failure a step's outcome was (``None``: it succeeded). ``client`` (4xx other than
#: 429) and ``other`` are never retried.
Failure = Literal["connection", "timeout", "server", "rate_limited", "client", "other"]
FAILURES: tuple[RetryOn, ...] = ("connection", "timeout", "server", "rate_limited")


class Strict(BaseModel):  # konnectz_contracts.model imports this module (StepBase.on_error)
    model_config = ConfigDict(extra="forbid")


class Retry(Strict):
    attempts: int = Field(ge=1, le=MAX_RETRIES, description="Retries after the first attempt")
    backoff: Literal["fixed", "exponential"] = "exponential"
    delay_seconds: float = Field(default=2.0, ge=0.0, le=MAX_RETRY_DELAY_SECONDS)
    max_delay_seconds: float = Field(default=60.0, ge=0.0, le=MAX_RETRY_DELAY_SECONDS)
    on: list[RetryOn] = Field(default_factory=lambda: list(FAILURES), min_length=1, max_length=4)

    @model_validator(mode="after")
    def _cap_at_least_delay(self) -> Retry:
        if self.max_delay_seconds < self.delay_seconds:
            raise ValueError("max_delay_seconds must be at least delay_seconds")
        return self


class OnError(Strict):
    retry: Retry | None = None
    continue_run: bool = False


def retry_delay(retry: Retry, retry_number: int, retry_after: float | None = None) -> float | None:
    """Seconds to wait before retry ``retry_number`` (1-based); a server's ``retry_after`` is honoured
    when longer. None: that Retry-After is longer than :data:`MAX_RETRY_AFTER_SECONDS` (do not wait)."""
    if retry.backoff == "fixed":
        delay = retry.delay_seconds
    else:
        delay = retry.delay_seconds * 2 ** (retry_number - 1)
    delay = min(delay, retry.max_delay_seconds)
    if retry_after is not None:
        if retry_after > MAX_RETRY_AFTER_SECONDS:
            return None
        delay = max(delay, retry_after)
    return delay


class CanvasOnError(Strict):
    """The node's ``data.onError`` as the editor's card writes it (camelCase, like the canvas)."""

    model_config = ConfigDict(extra="ignore")

    retries: int = Field(default=0, ge=0, le=MAX_RETRIES)
    backoff: Literal["fixed", "exponential"] = "exponential"
    delaySeconds: float = Field(default=2.0, ge=0.0, le=MAX_RETRY_DELAY_SECONDS)
    maxDelaySeconds: float = Field(default=60.0, ge=0.0, le=MAX_RETRY_DELAY_SECONDS)
    retryOn: list[RetryOn] = Field(default_factory=lambda: list(FAILURES), max_length=4)
    continueOnError: bool = False


def compile_on_error(card: CanvasOnError | None) -> OnError | None:
    """The step's :class:`OnError` from a node's ``data.onError`` (None when it asks for nothing).
    Raises ``ValueError`` with what is wrong."""
    if card is None:
        return None
    retry = None
    if card.retries > 0:
        if not card.retryOn:
            raise ValueError("Retry on: choose at least one kind of failure to retry")
        retry = Retry(
            attempts=card.retries,
            backoff=card.backoff,
            delay_seconds=card.delaySeconds,
            max_delay_seconds=max(card.maxDelaySeconds, card.delaySeconds),
            on=list(dict.fromkeys(card.retryOn)),
        )
    if retry is None and not card.continueOnError:
        return None
    return OnError(retry=retry, continue_run=card.continueOnError)
