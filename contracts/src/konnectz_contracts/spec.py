"""The compiled flow spec: the only thing the runner executes.

The api compiles a konnect's canvas_json into a :class:`FlowSpec` when it is published.
The trigger is one of the kinds in :mod:`konnectz_contracts.triggers`, each step one of the kinds in
:mod:`konnectz_runner.engine.steps` (discriminated by ``kind``). String values of steps may carry
references ``{{<node_id>.<dotted.path>}}`` to the output of the trigger or of an earlier step; they
are resolved by :mod:`konnectz_contracts.refs` (plain string templating, never an evaluator).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from konnectz_contracts.model import KeyValue, Strict
from konnectz_contracts.run_control import RunControl
from konnectz_contracts.steps import Step
from konnectz_contracts.steps.api_call import ApiCallStep
from konnectz_contracts.steps.iterator import ONLY_ONCE
from konnectz_contracts.steps.respond import check_flow
from konnectz_contracts.timezones import parse_zone
from konnectz_contracts.triggers import FormTrigger, PollingTrigger, ScheduleTrigger, Trigger, WebhookTrigger

__all__ = [
    "DELAY_AFTER_ITERATOR",
    "NOT_IN_PATH",
    "ApiCallStep",
    "FlowSpec",
    "FormTrigger",
    "KeyValue",
    "PollingTrigger",
    "ScheduleTrigger",
    "Step",
    "Trigger",
    "WebhookTrigger",
    "check_paths",
]

# Kinds a router path cannot hold (one level of paths; a delay or iterator would suspend or
# multiply one path only).
NOT_IN_PATH = {
    "router": "a router",
    "join": "a join",
    "delay": "a delay",
    "wait": "a wait for a call",
    "approval": "an approval",
    "iterator": "an iterator",
}


def check_paths(steps: list[Any]) -> None:
    """The rules of paths that join (ValueError says which is broken): the steps after a router are
    its paths' steps, path after path, then its join if it has one; a path step is on one path and
    is not a router, join, delay or iterator; a join names a router before it."""
    ids = [step.id for step in steps]
    position = 0
    while position < len(steps):
        step = steps[position]
        if step.kind == "join":
            if step.router not in ids[:position]:
                raise ValueError(f"join {step.id}: its router {step.router!r} is not a step before it")
            raise ValueError(f"join {step.id}: it must come right after the steps of the paths of router {step.router}")
        if step.kind != "router":
            position += 1
            continue
        on_paths = [step_id for path in step.paths for step_id in path.steps]
        for path in step.paths:
            for step_id in path.steps:
                if step_id not in ids:
                    raise ValueError(f"router {step.id}, path {path.name}: step {step_id!r} is not in the flow")
        expected = ids[position + 1 : position + 1 + len(on_paths)]
        if expected != on_paths:
            raise ValueError(
                f"router {step.id}: its paths' steps must follow it, path after path, in order "
                f"(expected {on_paths}, found {expected})"
            )
        by_id = {s.id: s for s in steps}
        for path in step.paths:
            for step_id in path.steps:
                kind = by_id[step_id].kind
                if waits_for_flow(by_id[step_id]):
                    raise ValueError(f"router {step.id}, path {path.name}: {CALL_WAITS} cannot be inside a path")
                if kind in NOT_IN_PATH:
                    raise ValueError(f"router {step.id}, path {path.name}: {NOT_IN_PATH[kind]} cannot be inside a path")
        position += 1 + len(on_paths)
        if position < len(steps) and steps[position].kind == "join":
            if steps[position].router != step.id:
                join = steps[position]
                raise ValueError(f"join {join.id}: it names router {join.router!r} but follows the paths of {step.id}")
            position += 1
        elif position < len(steps):
            raise ValueError(
                f"router {step.id} has no join: its paths end the flow, so no step can follow them "
                f"(add a join, or move step {steps[position].id} into a path)"
            )


# A delay suspends the whole run; inside an iterator's per-item pass it is refused.
DELAY_AFTER_ITERATOR = "A delay cannot come after the iterator: put it before the iterator."
WAIT_AFTER_ITERATOR = "A wait for a call cannot come after the iterator: put it before the iterator."
# call a flow: a Call a Flow step that waits for the called flow suspends the run like a wait.
CALL_WAITS = "a Call a Flow that waits for its result"
CALL_WAIT_AFTER_ITERATOR = (
    "A Call a Flow that waits for its result cannot come after the iterator: put it before, or set it to go on at once."
)


def waits_for_flow(step: Any) -> bool:
    """A Call a Flow step that waits for the called flow's result (it suspends the run)."""
    return getattr(step, "kind", None) == "call_flow" and getattr(step, "mode", None) == "wait"


class FlowSpec(Strict):
    """A published konnect. Dict input must carry the ``kind`` of the trigger and of each step."""

    version: Literal[1] = 1
    konnect_id: int
    owner_id: int
    name: str
    trigger_id: str = Field(min_length=1, description='Node id of the trigger node, e.g. "node-1"')
    trigger: Trigger
    steps: list[Step] = Field(min_length=1)
    timezone: str = Field(
        default="UTC",
        max_length=64,
        description="The owner's time zone, IANA (Europe/Berlin) or a GMT offset (GMT+05:30): "
        "dates without an offset are in it",
    )
    # revisions
    revision: int | None = None
    # The Kubernetes UID of the Konnect resource the flow is served from, when the operator hands the
    # flow to the shared runner pool (its runners bind their credential-broker tokens to it,
    # konnectz_contracts.broker_token). Never dumped (not in published specs, the CRD or the api's
    # schema): read from the pool's bucket only.
    resource_uid: SkipJsonSchema[str] = Field(default="", max_length=128, exclude=True)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        parse_zone(value)  # ValueError says why
        return value

    @model_validator(mode="after")
    def _schedule_zone(self) -> FlowSpec:
        """A schedule without its own time zone runs in the konnect's (the owner's) time zone."""
        if isinstance(self.trigger, ScheduleTrigger) and "timezone" not in self.trigger.model_fields_set:
            self.trigger.timezone = self.timezone
            self.trigger.model_fields_set.add("timezone")
        return self

    @model_validator(mode="after")
    def _one_iterator(self) -> FlowSpec:
        kinds = [step.kind for step in self.steps]
        if kinds.count("iterator") > 1:
            raise ValueError(ONLY_ONCE)
        if "iterator" in kinds and "delay" in kinds[kinds.index("iterator") :]:
            raise ValueError(DELAY_AFTER_ITERATOR)
        if "iterator" in kinds and {"wait", "approval"} & set(kinds[kinds.index("iterator") :]):
            raise ValueError(WAIT_AFTER_ITERATOR)
        if "iterator" in kinds and any(waits_for_flow(s) for s in self.steps[kinds.index("iterator") :]):
            raise ValueError(CALL_WAIT_AFTER_ITERATOR)
        ids = [self.trigger_id, *(step.id for step in self.steps)]
        if len(set(ids)) != len(ids):
            raise ValueError("node ids must be unique")
        return self

    # paths
    @model_validator(mode="after")
    def _paths_join(self) -> FlowSpec:
        check_paths(self.steps)
        return self

    # respond: a Respond step only where a Webhook waits for it (konnectz_contracts.steps.respond)
    @model_validator(mode="after")
    def _respond_to_webhook(self) -> FlowSpec:
        problem = check_flow(self.trigger, self.steps)
        if problem is not None:
            raise ValueError(problem)
        return self

    # run control
    run_control: RunControl | None = None
