"""Building blocks shared by the flow spec, the step kinds and the triggers.

- :class:`Strict`: every contract model forbids unknown fields.
- :class:`KeyValue`: a key/value row (headers, params, body fields).
- :class:`StepBase`: the fields every step kind has (its canvas node id and display name).
- :class:`StepContext`: what a step's ``run`` gets besides its config.
- :class:`Outcome`: what a step's ``run`` returns; the engine turns it into a
  :class:`~konnectz_runner.events.StepResult` and decides what runs next.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field

from konnectz_runner.netguard import NetGuard

__all__ = ["KeyValue", "Outcome", "StepBase", "StepContext", "Strict", "utcnow"]


def utcnow() -> datetime:
    return datetime.now(UTC)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KeyValue(Strict):
    """A key/value row. ``secret`` marks a value the task log must not show (a header or param
    holding a credential); a secret header is also dropped on a redirect to another origin.

    ``sealed``: a value typed into a step as secret, encrypted by the api (``<key id>:<token>``,
    readable only by the api); ``value`` is then empty and the runner asks the api for the plain
    value when the step runs (:mod:`konnectz_runner.step_secrets`)."""

    key: str = Field(min_length=1)
    value: str = ""
    secret: bool = False
    # Left out of dumps when unset, so a Konnect without step secrets reads as before (and a null
    # never meets the CRD's string type).
    sealed: str | None = Field(default=None, max_length=8192, exclude_if=lambda v: v is None)


class StepBase(Strict):
    """Fields of every step. Subclasses add ``kind: Literal["<kind>"]`` and their configuration."""

    id: str = Field(min_length=1, description='Node id on the canvas, e.g. "node-2"')
    name: str


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
    # None: the api's broker (:func:`konnectz_runner.step_secrets.broker_step_secrets`).
    open_secrets: Callable[[int, list[str]], Awaitable[list[tuple[str, str | None]]]] | None = None


@dataclass
class Outcome:
    """The result of one step.

    - ``status`` ERROR with ``error`` ends the run as ERROR.
    - ``stop`` (a filter that did not pass) ends the run without error; the reason is logged.
    - ``items`` (an iterator) makes the following steps run once per item.
    - ``resume_at`` (a delay) suspends the run until then; the following steps run after it.
    """

    status: Literal["SUCCESS", "ERROR"] = "SUCCESS"
    output: Any = None
    input: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    stop: str | None = None
    items: list[Any] | None = None
    resume_at: datetime | None = None

    @classmethod
    def failed(cls, error: str, *, input: dict[str, Any] | None = None) -> Outcome:
        return cls(status="ERROR", error=error, input=input or {})
