"""Approval (in-house add-on): the run waits until one of its approvers approves or rejects it, or its timeout.

Built on the durable wait of :mod:`konnectz_contracts.steps.wait` (docs/waits.md): the run holds no
worker slot while it waits and continues on the revision it started with. When the step runs, the
runner asks the api (its broker door, ``/api/v1/internal/approvals``) to record the request and to
e-mail each approver an Approve and a Reject link: signed, single-use, expiring at the timeout. The
approvers must be the flow's owner or named members of the owner's team (the api refuses others).
A GET of a link shows a page with the decision to confirm and changes nothing; the confirmation
decides the wait once (a second click, or another approver afterwards, is told it was decided).
The api lists the pending approvals of the signed-in user (``GET /api/v1/approvals``).

From the canvas: ``approvers`` (e-mail addresses separated by commas; references allowed),
``message`` (what the approvers read; references allowed), and the timeout as for Wait for a Call:
``timeout``, ``timeout_unit`` (seconds, minutes, hours — the default — or days) and ``on_timeout``
(``continue``: output ``{"timed_out": true}``; ``stop``; ``fail``).

Output once decided: ``{"decision": "approved" | "rejected", "approved": true | false,
"decided_by": <the approver's e-mail>, "timed_out": false}``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from konnectz_contracts.compiling import config_values, fail, is_blank, validated
from konnectz_contracts.model import StepBase
from konnectz_contracts.waits import MAX_WAIT, ON_TIMEOUT, UNITS, timeout_settings

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "MAX_APPROVERS", "ON_TIMEOUT", "PROVIDERS", "UNITS", "Config", "compile_node", "split_approvers"]

KIND = "approval"
PROVIDERS = ("approval",)  # the catalogue app (catalogue/apps/approval.yaml) whose nodes compile to this kind
MAX_APPROVERS = 20


class Config(StepBase):
    kind: Literal["approval"] = "approval"
    approvers: str = Field(min_length=1, max_length=4000, description="E-mail addresses, comma-separated")
    message: str = Field(default="", max_length=10_000)
    timeout: int = Field(ge=1, le=31_622_400, description="How many units the run waits for a decision at most")
    timeout_unit: Literal["seconds", "minutes", "hours", "days"] = "days"
    on_timeout: Literal["continue", "stop", "fail"] = "continue"

    @model_validator(mode="after")
    def _bounded(self) -> Config:
        if self.span() > MAX_WAIT:
            raise ValueError(f"an approval waits at most {MAX_WAIT.days} days")
        return self

    def span(self) -> timedelta:
        return timedelta(**{self.timeout_unit: self.timeout})


def split_approvers(text: str) -> list[str]:
    """The addresses of a resolved ``approvers`` text (commas, semicolons or spaces between them), in
    order, each once, lower-cased."""
    seen: list[str] = []
    for part in text.replace(";", ",").replace(" ", ",").split(","):
        address = part.strip().lower()
        if address and address not in seen:
            seen.append(address)
    return seen


def compile_node(node: Node) -> Config:
    values = config_values(node)
    if is_blank(values.get("approvers")):
        raise fail(node, "enter who approves: the e-mail addresses of the owner or of team members")
    timing = timeout_settings(node, values, default_unit="days", waits_for="a decision")
    return validated(
        Config,
        node,
        id=node.id,
        name=node.detail.name or "Approval",
        approvers=str(values["approvers"]),
        message=str(values.get("message") or ""),
        **timing,
    )
