"""A task log's status: what happened to the run, in one word.

The runner's task event says SUCCESS or ERROR (the wire format is unchanged); the api stores a
finer status, derived from what the event already carries:

- ``SUCCESS``: every step ran (after an iterator: at least one item went through every step).
- ``FILTERED``: a Filter's conditions did not pass and the run stopped there (after an iterator:
  every item stopped at a filter). Nothing failed; the later steps did not run.
- ``ERROR``: a step failed.
- ``IN_DOUBT``: the runner stopped while a step with effects ran; it was not run again
  (:data:`konnectz_runner.engine.journal.IN_DOUBT_ERROR`). A kind of error: replayable.
- ``REFUSED``: refused before any step ran (the task quota): ``TaskEvent.refused``. A kind of error.
- ``CANCELLED``: a user cancelled the run (``TaskEvent.cancelled_by``, kept as the task log's
  ``cancelled_by``); the steps before the cancel ran. Not an error: not replayable.

Task logs written before these statuses existed hold SUCCESS or ERROR only. A replay is not a status
of its own: a run's ``replay_of`` / ``replayed_as`` say that (the replayed run keeps its status).
"""

from __future__ import annotations

from typing import Literal, get_args

from konnectz_contracts.events import TaskEvent
from konnectz_runner.engine import IN_DOUBT_ERROR

__all__ = ["ERROR_STATUSES", "STATUSES", "TaskLogStatus", "log_status", "statuses_for"]

TaskLogStatus = Literal["SUCCESS", "FILTERED", "ERROR", "IN_DOUBT", "REFUSED", "CANCELLED"]
STATUSES: tuple[str, ...] = get_args(TaskLogStatus)
#: The failed runs: what the ERROR filter (and error_task_count) takes in, and what can be replayed.
ERROR_STATUSES: tuple[str, ...] = ("ERROR", "IN_DOUBT", "REFUSED")


def log_status(event: TaskEvent) -> TaskLogStatus:
    """The task log's status of a finished run."""
    if event.refused is not None:
        return "REFUSED"
    if event.status == "CANCELLED":
        return "CANCELLED"
    if event.status == "ERROR":
        return "IN_DOUBT" if any(s.error == IN_DOUBT_ERROR for s in event.steps) else "ERROR"
    # A stop on a router path (a filter there) or on a skipped step stops that path only: the run
    # stopped when a step outside the paths (a filter, a router choosing no path, a join) stopped it.
    stops = [s for s in event.steps if s.stop is not None and s.path is None and s.status != "SKIPPED"]
    if any(s.item_index is None for s in stops):
        return "FILTERED"
    items = {s.item_index for s in event.steps if s.item_index is not None}
    stopped = {s.item_index for s in stops if s.item_index is not None}
    if items and items == stopped:
        return "FILTERED"
    return "SUCCESS"


def statuses_for(wanted: str) -> tuple[str, ...]:
    """The stored statuses a filter value selects: ERROR takes every failed run (ERROR, IN_DOUBT,
    REFUSED, as before these existed), any other value itself."""
    return ERROR_STATUSES if wanted == "ERROR" else (wanted,)
