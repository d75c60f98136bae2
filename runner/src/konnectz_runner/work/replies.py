"""A webhook's answer from its run, on the worker's side (:mod:`konnectz_contracts.responses`).

For a run whose caller waits (``RunRequest.respond_to``), :func:`run_replies` gives the worker the
run's :class:`RunReplies`, which it sets as the engine's :data:`~konnectz_runner.engine.RESPONDER`: a
Respond step sends through it, and the worker answers when the run ends (:func:`answer_end`) or waits
in a delay (:func:`answer_waiting`) unless a step answered first. The answer is a core NATS publish to
the subject the ingress listens on (a core NATS request: nothing is stored). The ingress says whether
it took the answer, so the task log tells an answer sent from one that came too late (the caller had
its 202 at the timeout) or found nobody waiting (NATS' no-responders reply).
"""

from __future__ import annotations

import logging
from typing import Any

import nats.errors

from konnectz_contracts.events import RunRequest, TaskEvent
from konnectz_contracts.responses import RESPONSES_PREFIX, TAKEN, WebhookReply, reply_for_event
from konnectz_runner.engine import Responder

__all__ = ["TAKEN", "CallReplies", "RunReplies", "answer_end", "answer_waiting", "run_replies"]

log = logging.getLogger(__name__)

ANSWERED = "the webhook was already answered (the first Respond step answers)"
RESUMED = "the webhook was answered 202 (accepted) when the run waited in a delay"
LATE = "the caller had already been answered 202 (accepted): the answer came after the Webhook's timeout"
NOBODY = "nobody waits for this answer any more (the caller had its 202 at the timeout, or went away)"
#: How long a worker waits for the ingress to say it took an answer.
CONFIRM_SECONDS = 5.0


class RunReplies:
    """Sends one run's answer to the ingress, once."""

    def __init__(self, nc: Any, run: RunRequest) -> None:
        assert run.respond_to is not None
        self.nc = nc
        self.subject = run.respond_to
        self.run_id = run.run_id
        # A run back from a delay answered 202 when it suspended. A run back from a wait for a call or
        # an approval did not (answer_waiting): its caller may still be held, within the Webhook's timeout.
        self.resumed = run.resume is not None and run.resume.wait is None
        self.sent = False

    async def send(self, reply: WebhookReply) -> str | None:
        if self.resumed:
            return RESUMED
        if self.sent:
            return ANSWERED
        self.sent = True
        try:
            taken = await self.nc.request(self.subject, reply.model_dump_json().encode(), timeout=CONFIRM_SECONDS)
        except nats.errors.NoRespondersError:
            return NOBODY
        except Exception as exc:  # the caller gets the ingress's 202 at its timeout
            log.warning("Run %s: its webhook answer was not sent (%s)", self.run_id, exc or type(exc).__name__)
            return f"the answer could not be sent ({exc or type(exc).__name__}); the caller gets 202 at the timeout"
        return None if taken.data == TAKEN else LATE


class CallReplies:
    """A called run's answer (a Call a Flow step's, an MCP tool call's run): the first Respond step's body
    is kept in its output as ``result`` (``keeps_result``), which its caller gets (docs/sub-flows.md)."""

    keeps_result = True

    def __init__(self, run: RunRequest) -> None:
        self.run_id = run.run_id
        self.sent = False

    async def send(self, reply: WebhookReply) -> str | None:
        del reply  # kept by the Respond step's output
        if self.sent:
            return ANSWERED
        self.sent = True
        return None


def run_replies(js: Any, run: RunRequest) -> RunReplies | CallReplies | None:
    """The run's replies (None: nobody waits for an answer)."""
    if run.source == "call":
        return CallReplies(run)
    nc = getattr(js, "_nc", None)
    if run.respond_to is None or nc is None or not run.respond_to.startswith(f"{RESPONSES_PREFIX}."):
        return None
    return RunReplies(nc, run)


async def answer_end(replies: Responder | None, event: TaskEvent) -> None:
    """The run ended: its answer, unless a Respond step (or the delay's 202) answered already."""
    if isinstance(replies, RunReplies) and not replies.sent and not replies.resumed:
        await replies.send(reply_for_event(event))


async def answer_waiting(replies: Responder | None, run_id: str, *, for_call: bool = False) -> None:
    """The run waits in a delay: the caller gets 202 with the run id (unless answered already). A run
    that waits for a call or an approval (``for_call``) leaves its caller held: if the wait is decided
    within the Webhook's ``respond_timeout_seconds``, the resumed run answers it (a Respond step, or its
    end); otherwise the ingress answers 202 at that timeout (docs/webhook-response.md)."""
    if isinstance(replies, RunReplies) and not replies.sent and not for_call:
        await replies.send(WebhookReply(run_id=run_id, waiting=True))
