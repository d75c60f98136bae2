"""Run control: what a published konnect says about its runs, and the run states shared in NATS.

- :class:`RunControl` (``FlowSpec.run_control``): a per-flow deadline, a concurrency limit and
  a failure alert. Compiled from the editor's flow settings; ``None`` means none of them.
- ``KZ_ACTIVE`` (KV bucket, :data:`KV_ACTIVE`): one entry per run that is queued, running or
  waiting in a delay, under :func:`active_key`; deleted when the run ends (its TaskEvent stored),
  and expired after :data:`ACTIVE_TTL_SECONDS` at the latest. The api lists a konnect's entries
  (keys ``o<owner>.k<konnect>.*``) to show them in the history and to cancel them.
- ``KZ_CANCELS`` (KV bucket, :data:`KV_CANCELS`): key :func:`cancel_key` holds a
  :class:`CancelRequest` written by the api; the runner checks it at each step boundary (and when
  a waiting run's timer fires) and ends the run as CANCELLED, naming who cancelled it. Entries
  expire after :data:`CANCEL_TTL_SECONDS`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from konnectz_contracts.model import Strict

__all__ = [
    "ACTIVE_TTL_SECONDS",
    "CANCEL_TTL_SECONDS",
    "KV_ACTIVE",
    "KV_CANCELS",
    "KV_SLOTS",
    "LISTED_AFTER_SECONDS",
    "MAX_CONCURRENCY",
    "MAX_DEADLINE_SECONDS",
    "ActiveRun",
    "ActiveStatus",
    "CancelRequest",
    "FailureAlert",
    "RunControl",
    "active_key",
    "active_prefix",
    "cancel_key",
]

KV_ACTIVE = "KZ_ACTIVE"
KV_CANCELS = "KZ_CANCELS"
#: Each konnect's concurrency slots and its queue (the runner's ``slots``), key ``k<konnect id>``.
KV_SLOTS = "KZ_SLOTS"
#: An active-run entry outlives any run: a run in a delay waits at most 30 days.
ACTIVE_TTL_SECONDS = 31 * 24 * 3600
CANCEL_TTL_SECONDS = 31 * 24 * 3600
#: A run of a flow without a concurrency limit is listed in ``KZ_ACTIVE`` (and can be cancelled) once it
#: has run this long: a run that ends sooner, as most do, writes no entry at all (two KV writes less per
#: run, docs/performance.md), and nobody could have pressed Cancel in time anyway. Queued runs, runs
#: resumed after a delay and redelivered runs are listed at once.
LISTED_AFTER_SECONDS = 0.5
MAX_DEADLINE_SECONDS = 7 * 24 * 3600
MAX_CONCURRENCY = 100


class FailureAlert(Strict):
    """What happens when a run of the flow fails: an e-mail to the owner and/or another flow run.

    At most one alert per flow per ``digest_minutes``: failures in between are counted and named
    in the next alert, so a broken flow cannot flood a mailbox."""

    email: bool = Field(default=False, description="E-mail the flow's owner")
    run_konnect_id: int | None = Field(
        default=None, description="Run this konnect of the same owner with the failed run's details"
    )
    digest_minutes: int = Field(default=60, ge=1, le=1440)


class RunControl(Strict):
    deadline_seconds: int | None = Field(
        default=None, ge=1, le=MAX_DEADLINE_SECONDS, description="A run still going after this is stopped"
    )
    max_concurrency: int | None = Field(
        default=None, ge=1, le=MAX_CONCURRENCY, description="Runs beyond it wait, in order, as queued"
    )
    alert: FailureAlert | None = None


#: What an unfinished run is doing: QUEUED (waits for a concurrency slot), RUNNING, WAITING (in a delay).
ActiveStatus = Literal["QUEUED", "RUNNING", "WAITING"]


class ActiveRun(Strict):
    """A run that has not finished: the value of its ``KZ_ACTIVE`` entry."""

    run_id: str
    konnect_id: int
    owner_id: int
    status: ActiveStatus
    since: AwareDatetime
    step_id: str | None = Field(default=None, description="The step it runs or waits in")
    resume_at: AwareDatetime | None = Field(default=None, description="When a waiting run goes on")
    revision: int | None = None
    # A run waiting in a Wait for a Call (docs/waits.md): whom it waits for, since when (resume_at: its timeout).
    waiting_for: str | None = Field(default=None, max_length=200, description="Whom a waiting run waits for")
    waiting_since: AwareDatetime | None = None


class CancelRequest(Strict):
    run_id: str
    by: str = Field(max_length=320, description="Who cancelled: the user's e-mail")
    at: AwareDatetime


def active_prefix(owner_id: int, konnect_id: int) -> str:
    return f"o{owner_id}.k{konnect_id}"


def active_key(owner_id: int, konnect_id: int, run_id: str) -> str:
    """The ``KZ_ACTIVE`` key of one run (run ids are hex or uuid text, valid in a KV key)."""
    return f"{active_prefix(owner_id, konnect_id)}.{run_id}"


def cancel_key(run_id: str) -> str:
    return f"cancel.{run_id}"
