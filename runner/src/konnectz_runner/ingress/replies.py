"""The ingress's side of a webhook answered from its run (:mod:`konnectz_contracts.responses`).

One core NATS subscription per runner process, ``kz.responses.<process id>.*``, made when the runner
starts (so it exists before any run is stored); each held request gets its own subject under it
(:meth:`ReplyWaiter.expect`), written into its run before the run is stored. The worker, in this
process or any other, sends the answer there as a request; the first one answers the caller and is
told :data:`~konnectz_contracts.responses.TAKEN`, a later one (after the timeout's 202, a redelivery)
``late``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from pydantic import ValidationError
from starlette.responses import JSONResponse, Response

from konnectz_contracts.responses import RESPONSES_PREFIX, SECURITY_HEADERS, TAKEN, WebhookReply

__all__ = ["RUN_ID_HEADER", "ReplyWaiter", "Waiting", "response_of", "timed_out"]

#: Every answer from a run names the run (its task log), as the at-once answer's body does.
RUN_ID_HEADER = "Konnectz-Run-Id"

log = logging.getLogger(__name__)


class Waiting:
    """One held request: its subject, and the future its answer sets."""

    def __init__(self, waiter: ReplyWaiter, key: str) -> None:
        self.waiter = waiter
        self.key = key
        self.subject = f"{waiter.prefix}.{key}"
        self.answer: asyncio.Future[WebhookReply] = asyncio.get_running_loop().create_future()

    async def wait(self, seconds: float) -> WebhookReply | None:
        """The run's answer, or None after ``seconds``."""
        try:
            return await asyncio.wait_for(asyncio.shield(self.answer), seconds)
        except TimeoutError:
            return None
        finally:
            self.forget()

    def forget(self) -> None:
        self.waiter.waiting.pop(self.key, None)


class ReplyWaiter:
    def __init__(self) -> None:
        self.prefix = f"{RESPONSES_PREFIX}.{uuid.uuid4().hex}"
        self.waiting: dict[str, Waiting] = {}
        self._sub: Any = None

    async def start(self, nc: Any) -> None:
        self._sub = await nc.subscribe(f"{self.prefix}.*", cb=self._on_reply)

    def expect(self) -> Waiting:
        waiting = Waiting(self, uuid.uuid4().hex)
        self.waiting[waiting.key] = waiting
        return waiting

    async def _on_reply(self, msg: Any) -> None:
        waiting = self.waiting.pop(msg.subject.rsplit(".", 1)[-1], None)
        taken = False
        if waiting is not None and not waiting.answer.done():  # else answered already, or timed out
            try:
                waiting.answer.set_result(WebhookReply.model_validate_json(msg.data))
                taken = True
            except ValidationError as exc:
                log.error("An invalid webhook answer on %s: %s", msg.subject, exc)
        if msg.reply:
            try:
                await msg.respond(TAKEN if taken else b"late")
            except Exception as exc:  # the worker records the answer as unconfirmed
                log.debug("Could not confirm a webhook answer: %s", exc or type(exc).__name__)


def response_of(reply: WebhookReply, timeout: float) -> Response:
    """The caller's response: the run's answer, or 202 with the run id when the run waits."""
    if reply.waiting:
        return timed_out(reply.run_id, timeout, "the run waits (a delay); it goes on later")
    headers = {**reply.headers, **SECURITY_HEADERS, RUN_ID_HEADER: reply.run_id}
    return Response(content=reply.body.encode("utf-8", "surrogatepass"), status_code=reply.status, headers=headers)


def timed_out(run_id: str, timeout: float, why: str | None = None) -> JSONResponse:
    message = why or f"the run did not answer within {timeout:g} s; it goes on"
    return JSONResponse({"status": "accepted", "run_id": run_id, "message": message}, status_code=202)
