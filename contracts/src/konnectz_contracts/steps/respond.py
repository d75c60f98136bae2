"""Respond (in-house add-on): answers the webhook that started the run, with a status, headers and a body.

Only in a flow whose trigger is a Webhook set to answer "using a Respond step"
(``WebhookTrigger.respond == "step"``), or the *Called by a flow or AI tool* trigger, where its body is
the result the caller gets (a Call a Flow step's ``result``, an MCP tool call's answer; docs/sub-flows.md):
:func:`check_flow` refuses it elsewhere, at save and publish.
The ingress holds the caller's request until the first Respond step runs (or its timeout: 202 with the
run id); see :mod:`konnectz_contracts.responses` and docs/webhook-response.md.

From the canvas: ``status`` (a number 200-599, or a reference resolving to one; default 200),
``headers`` (one ``Name: value`` per line, the value may hold references; or a line that is one
reference to an object of headers, e.g. an earlier step's; no hop-by-hop, framing, cookie or security
header: :data:`konnectz_contracts.responses.REFUSED_HEADERS`) and ``body`` (a
text with references; without a Content-Type header it is sent as ``application/json`` when it is
JSON, else as plain text).
Output: ``{"sent", "status", "headers", "body", "bytes"}`` (``body``: its first 2,000 characters;
``sent: false`` with ``not_sent`` saying why when another Respond step answered first, the run had
already answered 202, or nobody waits for an answer: Test & Review, a run started otherwise).
A body larger than :data:`konnectz_contracts.limits.RESPONSE_MAX_BYTES` ends the run as ERROR saying
so, and the caller gets a 502 with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from konnectz_contracts.compiling import config_values, fail, validated
from konnectz_contracts.model import StepBase
from konnectz_contracts.refs import REFERENCE
from konnectz_contracts.responses import MAX_STATUS, MIN_STATUS, check_header_name

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "KIND",
    "NEEDS_WEBHOOK",
    "PROVIDERS",
    "Config",
    "add_header",
    "check_flow",
    "compile_node",
    "header_lines",
    "parse_headers",
]

KIND = "respond"
PROVIDERS = ("respond",)  # the catalogue app (catalogue/apps/respond.yaml)
MAX_HEADERS = 50
NEEDS_WEBHOOK = (
    "A Respond step answers the webhook that started the run: the trigger must be a Webhook "
    "whose Respond is set to 'Using a Respond step' (or 'Called by a flow or AI tool', whose caller gets its body)"
)
NO_RESPOND_STEP = "Respond is set to 'Using a Respond step': add a Respond step, or answer at once or when the run ends"


class Config(StepBase):
    kind: Literal["respond"] = "respond"
    status: str = Field(default="200", min_length=1, max_length=500)
    # Not "headers" and "body": the API Call step's are lists, and the CRD types a field of the step union once.
    header_lines: str = Field(
        default="", max_length=20_000, description="Name: value lines (or a reference to an object)"
    )
    body_template: str = Field(default="", max_length=100_000)


def header_lines(text: str) -> list[tuple[str, str] | str]:
    """The headers text as ``(name, value template)`` pairs and lone references (an object of headers,
    resolved at run time). Raises ValueError saying which line is wrong."""
    lines: list[tuple[str, str] | str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if REFERENCE.fullmatch(line.strip()):
            lines.append(line.strip())
            continue
        name, colon, value = line.partition(":")
        name = name.strip()
        if not colon or not name:
            raise ValueError(f"line {number} is not 'Name: value'")
        lines.append((name, value.strip()))
    return lines


def add_header(headers: dict[str, str], name: str, value: str) -> None:
    """Add one header (its name checked, once, at most :data:`MAX_HEADERS`); ValueError says why not."""
    problem = check_header_name(name)
    if problem is not None:
        raise ValueError(problem)
    if any(existing.lower() == name.lower() for existing in headers):
        raise ValueError(f"the header {name} is set twice")
    if len(headers) >= MAX_HEADERS:
        raise ValueError(f"at most {MAX_HEADERS} headers")
    headers[name] = value


def parse_headers(text: str) -> dict[str, str]:
    """The fixed headers of the text (lone references left out): its names are checked here, at compile."""
    headers: dict[str, str] = {}
    for line in header_lines(text):
        if isinstance(line, tuple):
            add_header(headers, *line)
    return headers


def compile_node(node: Node) -> Config:
    values = config_values(node)
    status = str(values.get("status") or "200").strip()
    if REFERENCE.search(status) is None:
        if not status.isdigit() or not MIN_STATUS <= int(status) <= MAX_STATUS:
            raise fail(node, f"the status must be a number from {MIN_STATUS} to {MAX_STATUS} (or a reference)")
    headers = str(values.get("headers") or "")
    try:
        parse_headers(headers)
    except ValueError as exc:
        raise fail(node, f"Headers: {exc}") from None
    return validated(
        Config,
        node,
        id=node.id,
        name=node.detail.name or "Respond",
        status=status,
        header_lines=headers,
        body_template=str(values.get("body") or ""),
    )


def check_flow(trigger: Any, steps: list[Any]) -> str | None:
    """Why a flow's Respond steps and its trigger do not go together (None: they do)."""
    responds = any(step.kind == KIND for step in steps)
    by_step = getattr(trigger, "kind", None) == "webhook" and getattr(trigger, "respond", None) == "step"
    called = getattr(trigger, "kind", None) == "flow_call"  # its body is the caller's result
    if responds and not (by_step or called):
        return NEEDS_WEBHOOK
    if by_step and not responds:
        return NO_RESPOND_STEP
    return None
