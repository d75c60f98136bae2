"""When a flow fails (an error flow): a run starts for every failed run of the account's other flows.

A published flow with this trigger is the account's error flow: when a run of another of its flows
ends as ERROR or IN_DOUBT (a step failed; not a refused or cancelled run), the api, once it has
stored that run's task log, starts one run of each such error flow with :func:`failed_run_output`
as its trigger data: the flow (id, name, revision), the run (id, status, when, attempts), the step
that failed (id, name, kind), its error, and the failed run's own trigger data (``input``, cut to
:data:`MAX_INPUT_BYTES`).

- ``flows``: only failures of these flows (their ids); empty: every other flow of the account.
- Once per failed run: the error flow's run id is derived from the failed run's and the error
  flow's ids (:func:`error_run_id`), so a task event delivered twice starts it once.
- No cascade: a failed run of an error flow starts no error flow (neither itself nor another).

This runs beside the failure alerts of the Run settings (an e-mail or a flow, digested at most
once per interval): an error flow receives every failure, one run each.

From the canvas (provider ``flow_failed``): the node's ``selectedAddonsValue.flows`` (a list of
flow ids; empty or absent: every flow).
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError

from konnectz_contracts.compiling import TriggerInput, fail
from konnectz_contracts.events import TaskEvent
from konnectz_contracts.model import Strict

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "FAILED_STATUSES",
    "MAX_INPUT_BYTES",
    "PROVIDERS",
    "SAMPLE_OUTPUT",
    "FlowFailedTrigger",
    "compile_trigger",
    "error_run_id",
    "failed_run_output",
]

ORDER = 5
PROVIDERS = ("flow_failed",)
#: The task-log statuses of a failed run (a refused or cancelled run is not a failure of the flow).
FAILED_STATUSES = ("ERROR", "IN_DOUBT")
#: The failed run's trigger data larger than this (as JSON) is replaced by ``{"truncated": true, "bytes": n}``.
MAX_INPUT_BYTES = 256 * 1024
#: At most this many flows can be named.
MAX_FLOWS = 200
_NAMESPACE = uuid.UUID("2f0c1d7e-6b1e-4f53-9a55-6572726f7266")
_MAX_ERROR_CHARS = 2000


class FlowFailedTrigger(Strict):
    kind: Literal["flow_failed"] = "flow_failed"
    flows: list[int] = Field(
        default_factory=list,
        max_length=MAX_FLOWS,
        description="Only failures of these flows (their ids); empty: every other flow of the account",
    )


MODEL = FlowFailedTrigger


def compile_trigger(node: Node, inputs: TriggerInput) -> FlowFailedTrigger:
    """The node's ``selectedAddonsValue.flows`` (flow ids) into the trigger."""
    values = getattr(node.data, "selectedAddonsValue", None) or {}
    raw = values.get("flows") if isinstance(values, dict) else None
    if raw in (None, "", []):
        return FlowFailedTrigger()
    if not isinstance(raw, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in raw):
        raise fail(node, "Flows: choose flows from the list (or none, for every flow)")
    try:
        return FlowFailedTrigger(flows=list(dict.fromkeys(raw)))
    except ValidationError as exc:
        raise fail(node, f"Flows: at most {MAX_FLOWS} flows can be chosen") from exc


def error_run_id(failed_run_id: str, error_konnect_id: int) -> str:
    """The run id of error flow ``error_konnect_id``'s run for failed run ``failed_run_id`` (stable)."""
    return uuid.uuid5(_NAMESPACE, f"{failed_run_id}/{int(error_konnect_id)}").hex


def _input(value: dict[str, Any]) -> dict[str, Any]:
    size = len(json.dumps(value, default=str).encode())
    return value if size <= MAX_INPUT_BYTES else {"truncated": True, "bytes": size}


def failed_run_output(event: TaskEvent, status: str, konnect_name: str) -> dict[str, Any]:
    """The error flow's trigger data for the failed run ``event`` (its task log's ``status``)."""
    failed = next((s for s in event.steps if s.status == "ERROR" and not s.continued), None)
    if failed is None:
        failed = next((s for s in event.steps if s.error), None)
    return {
        "flow": {"id": event.konnect_id, "name": konnect_name or event.konnect_name, "revision": event.revision},
        "run": {
            "id": event.run_id,
            "status": status,
            "started_at": event.started_at.isoformat(),
            "failed_at": event.finished_at.isoformat(),
            "attempts": event.attempts,
        },
        "step": {"id": failed.step_id, "name": failed.name, "app": failed.app} if failed is not None else None,
        "error": (failed.error or "")[:_MAX_ERROR_CHARS] if failed is not None else None,
        "input": _input(event.trigger_output),
    }


#: What Test & Review shows for the trigger: the fields later steps can map.
SAMPLE_OUTPUT: dict[str, Any] = {
    "flow": {"id": 12, "name": "Orders to CRM", "revision": 3},
    "run": {
        "id": "3f2b9c0e5d7a4e1b9c8d7e6f5a4b3c2d",
        "status": "ERROR",
        "started_at": "2026-11-29T10:00:00+00:00",
        "failed_at": "2026-11-29T10:00:02+00:00",
        "attempts": 1,
    },
    "step": {"id": "node-3", "name": "Create contact", "app": "api_call"},
    "error": "HTTP 500 from https://crm.example.com/contacts: internal error",
    "input": {"email": "ada@example.com"},
}
