"""A webhook's answer sent from its run (issue 37, item 2; docs/webhook-response.md).

A webhook trigger whose ``respond`` is not ``at_once`` (:class:`~konnectz_contracts.triggers.webhook.WebhookTrigger`)
holds the caller's request while its run goes on. Before it stores the run, the ingress listens on a
subject of its own under :data:`RESPONSES_PREFIX` (core NATS: nothing is stored) and writes it into the
run (``RunRequest.respond_to``); the worker that runs it, in this process or another, publishes one
:class:`WebhookReply` there:

- when a Respond step runs (``respond: step``; the first one answers, a later one is recorded as not sent);
- when the run ends (``respond: when_done``, and ``step`` when no Respond step answered):
  :func:`reply_for_event`;
- when the run waits (a Delay suspends it): a ``waiting`` notice, answered 202 with the run id.

Nobody may be listening any more (the ingress answered 202 at its timeout, or the run was redelivered
or resumed): a publish to a subject nobody listens on is dropped by NATS, which is harmless.

Pure models and rules, no I/O.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from konnectz_contracts.limits import RESPONSE_MAX_BYTES

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_STATUS",
    "MAX_TIMEOUT_SECONDS",
    "MIN_STATUS",
    "REFUSED_HEADERS",
    "RESPONSES_PREFIX",
    "SECURITY_HEADERS",
    "TAKEN",
    "Respond",
    "WebhookReply",
    "check_header_name",
    "content_type_of",
    "reply_for_event",
    "too_large",
]

#: The ingress listens on ``kz.responses.<its id>.<request id>`` (one subscription per runner process).
RESPONSES_PREFIX = "kz.responses"
#: The ingress's reply to a worker's answer it took (anything else: it came too late).
TAKEN = b"taken"
#: How the webhook answers: at once (200 with the run id, as ever), when the run ends, or from a Respond step.
Respond = Literal["at_once", "when_done", "step"]
DEFAULT_TIMEOUT_SECONDS = 30
MAX_TIMEOUT_SECONDS = 120
#: A reply's status: a final one (1xx are interim answers, which an HTTP server cannot send as the reply).
MIN_STATUS = 200
MAX_STATUS = 599

#: Headers a Respond step may not set: hop-by-hop and framing headers (the server sets them), cookies
#: (every flow's webhooks share the runner's origin: one flow's cookie would reach another's pages) and
#: the ones the ingress sets itself for safety (:data:`SECURITY_HEADERS`).
REFUSED_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "content-encoding",
        "date",
        "server",
        "set-cookie",
        "set-cookie2",
        "content-security-policy",
        "x-content-type-options",
        "konnectz-run-id",
    }
)
#: Set on every reply sent from a run: an HTML answer renders without running scripts, in an origin of
#: its own (the runner's origin may serve the platform's pages too), and is never sniffed as another type.
SECURITY_HEADERS = {"Content-Security-Policy": "sandbox", "X-Content-Type-Options": "nosniff"}
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def check_header_name(name: str) -> str | None:
    """Why a reply may not set header ``name`` (None: it may)."""
    if not name or any(c not in _TOKEN for c in name):
        return f"{name!r} is not a header name (letters, digits and - only)"
    if name.lower() in REFUSED_HEADERS:
        return f"the header {name} cannot be set by a Respond step (the server or the ingress sets it)"
    return None


def content_type_of(body: str) -> str:
    """A reply's Content-Type when the step sets none: JSON when the body is JSON, else plain text."""
    text = body.strip()
    if text[:1] in ("{", "[", '"') or text in ("true", "false", "null"):
        try:
            json.loads(text)
        except ValueError:
            return "text/plain; charset=utf-8"
        return "application/json"
    return "text/plain; charset=utf-8"


def too_large(size: int) -> str:
    return f"The response body is {size} bytes; a webhook's answer may be at most {RESPONSE_MAX_BYTES} bytes"


class WebhookReply(BaseModel):
    """What the worker publishes to ``RunRequest.respond_to``; the ingress answers the caller with it."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    #: The run waits (a Delay): the ingress answers 202 with the run id.
    waiting: bool = False
    status: int = Field(default=200, ge=MIN_STATUS, le=MAX_STATUS)
    headers: dict[str, str] = Field(default_factory=dict)
    body: str = ""

    @classmethod
    def failed(cls, run_id: str, status: int, message: str) -> WebhookReply:
        body = json.dumps({"message": message, "run_id": run_id})
        return cls(run_id=run_id, status=status, headers={"Content-Type": "application/json"}, body=body)


def reply_for_event(event: Any) -> WebhookReply:
    """The answer of a run that ended (``respond: when_done``, or ``step`` without a Respond step that
    answered), from its :class:`~konnectz_contracts.events.TaskEvent`:

    - SUCCESS: 200, the output of the last step that succeeded, as JSON (``{}`` when none has one);
    - ERROR or CANCELLED: 500 ``{"message": "The run failed" | "The run was refused" | "The run was
      cancelled" + "; its task log says why", "run_id"}`` (the error stays in the task log: the caller
      may not be the flow's owner);
    - an output larger than :data:`RESPONSE_MAX_BYTES`: 502 saying so.
    """
    if event.status != "SUCCESS":
        what = "The run was cancelled" if event.status == "CANCELLED" else "The run failed"
        if event.status == "ERROR" and getattr(event, "refused", None):
            what = "The run was refused"  # e.g. its owner's task quota
        return WebhookReply.failed(event.run_id, 500, f"{what}; its task log says why")
    output: Any = {}
    for step in reversed(event.steps):
        if step.status == "SUCCESS" and step.output is not None:
            output = step.output
            break
    body = json.dumps(output, ensure_ascii=False, separators=(",", ":"), default=str)
    size = len(body.encode())
    if size > RESPONSE_MAX_BYTES:
        return WebhookReply.failed(event.run_id, 502, too_large(size))
    return WebhookReply(run_id=event.run_id, headers={"Content-Type": "application/json"}, body=body)
