"""Wait for a call (in-house add-on): the run waits until its resume URL is called, or its timeout.

The resume URL is signed, one per run and Wait step (:mod:`konnectz_contracts.waits`), and known from
the start of the run: steps *before* the wait can send it to another system as
``{{<wait step id>.resume_url}}`` (for example ``{{node-3.resume_url}}`` in an e-mail or an API call).
The run waits durably (no worker slot held; it survives restarts of the runner and NATS) and
continues on the revision it started with. See docs/waits.md.

From the canvas: the fields ``timeout`` (a whole number ≥ 1), ``timeout_unit`` (seconds, minutes, hours —
the default — or days; at most :data:`~konnectz_contracts.waits.MAX_WAIT`) and ``on_timeout``:
``continue`` (the default: the run goes on, the step's output is ``{"timed_out": true}``), ``stop``
(the run stops there without error) or ``fail`` (the run ends as ERROR on this step).

Output when called: the call's body (a JSON object, form fields or query parameters, as a webhook's
trigger output), plus ``"timed_out": false``. While the run waits (and for earlier steps):
``{"resume_url"}``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from konnectz_contracts.compiling import config_values, validated
from konnectz_contracts.model import StepBase
from konnectz_contracts.waits import MAX_WAIT, ON_TIMEOUT, UNITS, timeout_settings

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "ON_TIMEOUT", "PROVIDERS", "UNITS", "Config", "compile_node"]

KIND = "wait"
PROVIDERS = ("wait",)  # the catalogue app (catalogue/apps/wait.yaml) whose nodes compile to this kind


class Config(StepBase):
    kind: Literal["wait"] = "wait"
    timeout: int = Field(ge=1, le=31_622_400, description="How many units the run waits for the call at most")
    timeout_unit: Literal["seconds", "minutes", "hours", "days"] = "hours"
    on_timeout: Literal["continue", "stop", "fail"] = "continue"

    @model_validator(mode="after")
    def _bounded(self) -> Config:
        if self.span() > MAX_WAIT:
            raise ValueError(f"a wait lasts at most {MAX_WAIT.days} days")
        return self

    def span(self) -> timedelta:
        return timedelta(**{self.timeout_unit: self.timeout})


def compile_node(node: Node) -> Config:
    values = config_values(node)
    timing = timeout_settings(node, values, default_unit="hours", waits_for="the call")
    return validated(
        Config,
        node,
        id=node.id,
        name=node.detail.name or "Wait for a call",
        **timing,
    )
