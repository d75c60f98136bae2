"""The compiled flow spec: the only thing the runner executes.

The api compiles a konnect's canvas_json into a :class:`FlowSpec` when it is published.
String values of an API-call step (url, headers, params, body) may carry references
``{{<node_id>.<dotted.path>}}`` to the output of the trigger or of an earlier step; they are
resolved by :mod:`konnectz_runner.refs` (plain string templating, never an evaluator).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ApiCallStep", "FlowSpec", "KeyValue", "Step", "Trigger", "WebhookTrigger"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KeyValue(_Strict):
    key: str = Field(min_length=1)
    value: str = ""


class WebhookTrigger(_Strict):
    """A run starts when ``/hooks/<token>`` receives a request; the token is matched in full."""

    kind: Literal["webhook"] = "webhook"
    token: str = Field(min_length=20)


# A discriminated union once schedule/app triggers join: ``Annotated[A | B, Field(discriminator="kind")]``.
Trigger = Annotated[WebhookTrigger, Field(discriminator="kind")]


class ApiCallStep(_Strict):
    """One HTTP request. ``body`` keys may be dotted (``customer.name``) to build nested JSON."""

    kind: Literal["api_call"] = "api_call"
    id: str = Field(min_length=1, description='Node id on the canvas, e.g. "node-2"')
    name: str
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    url: str
    headers: list[KeyValue] = Field(default_factory=list)
    params: list[KeyValue] = Field(default_factory=list)
    body: list[KeyValue] = Field(default_factory=list)
    payload_type: Literal["JSON"] = "JSON"
    wrap_in_array: bool = False


Step = Annotated[ApiCallStep, Field(discriminator="kind")]


class FlowSpec(_Strict):
    """A published konnect. Dict input must carry the ``kind`` of the trigger and of each step."""

    version: Literal[1] = 1
    konnect_id: int
    owner_id: int
    name: str
    trigger_id: str = Field(min_length=1, description='Node id of the trigger node, e.g. "node-1"')
    trigger: Trigger
    steps: list[Step] = Field(min_length=1)
