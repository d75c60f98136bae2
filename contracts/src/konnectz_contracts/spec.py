"""The compiled flow spec: the only thing the runner executes.

The api compiles a konnect's canvas_json into a :class:`FlowSpec` when it is published.
The trigger is one of the kinds in :mod:`konnectz_contracts.triggers`, each step one of the kinds in
:mod:`konnectz_runner.steps` (discriminated by ``kind``). String values of steps may carry
references ``{{<node_id>.<dotted.path>}}`` to the output of the trigger or of an earlier step; they
are resolved by :mod:`konnectz_contracts.refs` (plain string templating, never an evaluator).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from konnectz_contracts.model import KeyValue, Strict
from konnectz_contracts.run_control import RunControl
from konnectz_contracts.steps import Step
from konnectz_contracts.steps.api_call import ApiCallStep
from konnectz_contracts.steps.iterator import ONLY_ONCE
from konnectz_contracts.timezones import parse_zone
from konnectz_contracts.triggers import FormTrigger, PollingTrigger, ScheduleTrigger, Trigger, WebhookTrigger

__all__ = [
    "DELAY_AFTER_ITERATOR",
    "ApiCallStep",
    "FlowSpec",
    "FormTrigger",
    "KeyValue",
    "PollingTrigger",
    "ScheduleTrigger",
    "Step",
    "Trigger",
    "WebhookTrigger",
]

# A delay suspends the whole run; inside an iterator's per-item pass it is refused.
DELAY_AFTER_ITERATOR = "A delay cannot come after the iterator: put it before the iterator."


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
        ids = [self.trigger_id, *(step.id for step in self.steps)]
        if len(set(ids)) != len(ids):
            raise ValueError("node ids must be unique")
        return self

    # run control
    run_control: RunControl | None = None
