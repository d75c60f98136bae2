"""Building blocks shared by the flow spec, the step kinds and the triggers.

- :class:`Strict`: every contract model forbids unknown fields.
- :class:`KeyValue`: a key/value row (headers, params, body fields).
- :class:`StepBase`: the fields every step kind has (its canvas node id and display name).

What a step's ``run`` gets and returns (``StepContext``, ``Outcome``) carries an HTTP client and
the outbound guard, so it is the runner's: :mod:`konnectz_runner.engine.context`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from konnectz_contracts.on_error import OnError

__all__ = ["KeyValue", "StepBase", "Strict", "utcnow"]


def utcnow() -> datetime:
    return datetime.now(UTC)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KeyValue(Strict):
    """A key/value row. ``secret`` marks a value the task log must not show (a header or param
    holding a credential); a secret header is also dropped on a redirect to another origin.

    ``sealed``: a value typed into a step as secret, encrypted by the api (``<key id>:<token>``,
    readable only by the api); ``value`` is then empty and the runner asks the api for the plain
    value when the step runs (:mod:`konnectz_runner.apps.step_secrets`)."""

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
    # What happens when the step fails (konnectz_contracts.on_error); left out of dumps when unset, so
    # a Konnect without it reads as before.
    on_error: OnError | None = Field(default=None, exclude_if=lambda v: v is None)
