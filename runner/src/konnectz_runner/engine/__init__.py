"""The engine room: a flow spec run step by step, each finished step journalled.

- :mod:`.flow`: :func:`execute` runs a :class:`~konnectz_contracts.spec.FlowSpec` for one run (paths,
  iterators, delays, deadline and cancel checks);
- :mod:`.journal`: the step journal in ``KZ_STEPS`` (a redelivered run resumes after its last step);
- :mod:`.context`: what a step's ``run`` gets (:class:`StepContext`) and returns (:class:`Outcome`);
- :mod:`.steps`: one module per step kind (``steps/<kind>.py``, found by discovery); :mod:`.dates`: the
  add-ons' dates.

This face is what other rooms, the api and the tools may import (``from konnectz_runner.engine
import ...``); the modules above are the room's own.
"""

from konnectz_runner.engine.context import (
    FLOW_CALLS,
    RESPONDER,
    CallRefused,
    FlowStarter,
    Outcome,
    Responder,
    StepContext,
)
from konnectz_runner.engine.flow import Suspended, execute, step_result, suspension_failed
from konnectz_runner.engine.journal import (
    IN_DOUBT_ERROR,
    PURE_KINDS,
    InDoubt,
    JournalEntry,
    StepBusy,
    StepJournal,
    step_key,
)
from konnectz_runner.engine.steps import KINDS, app_event, run_step
from konnectz_runner.engine.steps.app_event import MAX_POLL_BYTES, CredentialSource, app_items, remember_account
from konnectz_runner.engine.steps.join import merge as join_merge

__all__ = [
    "FLOW_CALLS",
    "IN_DOUBT_ERROR",
    "KINDS",
    "MAX_POLL_BYTES",
    "PURE_KINDS",
    "RESPONDER",
    "CallRefused",
    "CredentialSource",
    "FlowStarter",
    "InDoubt",
    "JournalEntry",
    "Outcome",
    "Responder",
    "StepBusy",
    "StepContext",
    "StepJournal",
    "Suspended",
    "app_event",
    "app_items",
    "execute",
    "join_merge",
    "remember_account",
    "run_step",
    "step_key",
    "step_result",
    "suspension_failed",
]
