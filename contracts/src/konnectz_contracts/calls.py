"""Call a flow, on the wire (docs/sub-flows.md): a runner asks the api to start a called flow's run.

A Call a Flow step's runner sends a :class:`CallStart` as a NATS request on :data:`CALL_SUBJECT`; the
api (every replica, one queue group) checks it against PostgreSQL, the one place that knows every
published flow and its owner, and answers a :class:`CallStarted`:

- the called flow must exist, be published, start with the *Called by a flow or AI tool* trigger and
  belong to the owner of the calling flow (looked up from ``caller.konnect_id``, never taken from the
  request); another account's flow is answered exactly like a missing one;
- the arguments are checked against the trigger's inputs (required fields, types, options);
- ``caller.depth`` (how deep the called run will be) is at most
  :data:`~konnectz_contracts.limits.MAX_CALL_DEPTH`;
- then the api stores the called run in ``KZ_RUNS`` (``Nats-Msg-Id`` = ``run_id``, chosen by the caller
  from its run and step, so asking again after a crash stores it once) and answers its id.

``error`` set: refused (``status`` 4xx: the step fails with the reason, not retried) or not started
(``status`` 503: the step may be retried by its On error policy).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from konnectz_contracts.events import CallerLink

__all__ = ["CALL_SUBJECT", "CALL_SUBJECTS", "CallStart", "CallStarted"]

CALL_SUBJECT = "kz.calls.start"
CALL_SUBJECTS = "kz.calls.>"


class CallStart(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(min_length=1, max_length=64, description="The called run's id (derived by the caller)")
    flow_id: int = Field(ge=1, le=2**53)
    arguments: dict[str, Any] = Field(default_factory=dict)
    caller: CallerLink


class CallStarted(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str | None = None
    flow_id: int
    flow_name: str = ""
    error: str | None = None
    status: int = 200
