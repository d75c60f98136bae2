"""Call a flow, on the runner's side: start a called flow's run, and hand its result to a waiting caller
(docs/sub-flows.md; the wire is :mod:`konnectz_contracts.calls`).

The interface, small on purpose (an AI Agent step may use it to offer flows as tools):

- :func:`called_run_id` — the called run's id, derived from the caller's run, step and item: starting it
  again after a crash stores the same run once.
- :func:`start_call` — ask the api to start it (a NATS request on ``kz.calls.start``). The api checks
  that the flow is the caller's owner's, published, with the *Called by a flow or AI tool* trigger, the
  arguments against its inputs, and the depth; then stores the run. Raises
  :class:`~konnectz_runner.engine.context.CallRefused` with the reason.
- :func:`callee_result` — what a finished called run hands back: its Respond body when a Respond step
  answered, else its last step's output; its status and error.
- :func:`report_end` — the called run ended: decide its caller's wait (``KZ_WAITS``, a compare-and-set:
  once, whoever comes first; a caller that timed out meanwhile is told so and nothing more happens). The
  worker calls it after the called run's task event is stored and before the run is acknowledged, so a
  crash between the two decides it on the redelivery.
- :class:`FlowCalls` — the engine's :data:`~konnectz_runner.engine.context.FLOW_CALLS` for one run.

To wait without holding a worker slot, the caller suspends like a Wait for a Call
(:mod:`konnectz_runner.engine.steps.call_flow`): its wait's key is
``konnectz_contracts.waits.wait_key(caller run id, step id)``.

An AI Agent's sub-flow tool waits holding its slot instead (:meth:`FlowCalls.call`): the called run is
started with ``wait`` and the caller's ``step_id`` naming the tool call (``<agent step>/tool-<i>-<j>``);
:func:`report_end` decides that key before anything waits on it, which stores an *early* entry holding the
result (:func:`konnectz_runner.bus.waits.decide_call`); the agent reads it (polled, within its time bound)
and deletes it. No run is resumed from it: the entry never holds a waiting run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any

import nats.errors
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue
from pydantic import ValidationError

from konnectz_contracts.calls import CALL_SUBJECT, CallStart, CallStarted
from konnectz_contracts.events import CallerLink, RunRequest, TaskEvent, Unstorable
from konnectz_contracts.limits import CALL_RESULT_MAX_BYTES, MAX_CALL_DEPTH
from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.waits import WaitEntry, wait_key
from konnectz_runner.bus import decide_call
from konnectz_runner.engine import CallRefused

__all__ = [
    "CALL_TIMEOUT_SECONDS",
    "FlowCalls",
    "called_run_id",
    "callee_result",
    "report_end",
    "start_call",
]

log = logging.getLogger(__name__)

#: How long a runner waits for the api to start a called run.
CALL_TIMEOUT_SECONDS = 10.0
_NAMESPACE = uuid.UUID("6b7a2d63-616c-6c2d-666c-6f77732d0001")
#: How often a sub-flow tool looks for its called run's result: first, then at most (seconds).
POLL_FIRST, POLL_MAX = 0.05, 1.0


def called_run_id(caller_run_id: str, step_id: str, item_index: int | None = None) -> str:
    """The id of the run a Call a Flow step starts (the same for every delivery of that step)."""
    item = "" if item_index is None else f"/{item_index}"
    return uuid.uuid5(_NAMESPACE, f"{caller_run_id}/{step_id}{item}").hex


async def start_call(
    nc: Any,
    caller: CallerLink,
    flow_id: int,
    arguments: dict[str, Any],
    *,
    run_id: str,
    wait_seconds: float = CALL_TIMEOUT_SECONDS,
) -> CallStarted:
    """Ask the api to start flow ``flow_id`` with ``arguments`` for ``caller`` (its ``depth`` the called
    run's). Raises :class:`CallRefused` (``transient`` when the api did not answer)."""
    if caller.depth > MAX_CALL_DEPTH:
        raise CallRefused(
            f"Flows call flows {caller.depth} levels deep here; the limit is {MAX_CALL_DEPTH} (a cycle of flows?)"
        )
    request = CallStart(run_id=run_id, flow_id=flow_id, arguments=arguments, caller=caller)
    try:
        data = request.model_dump_json().encode()
    except ValueError as exc:
        raise CallRefused(f"The inputs cannot be sent as JSON: {exc}") from exc
    try:
        msg = await nc.request(CALL_SUBJECT, data, timeout=wait_seconds)
    except (nats.errors.NoRespondersError, nats.errors.TimeoutError, TimeoutError) as exc:
        raise CallRefused(
            f"The api did not answer the request to start flow {flow_id} ({type(exc).__name__})", transient=True
        ) from exc
    except nats.errors.Error as exc:
        raise CallRefused(f"The request to start flow {flow_id} failed: NATS: {exc}", transient=True) from exc
    try:
        reply = CallStarted.model_validate_json(msg.data)
    except ValidationError as exc:
        raise CallRefused("The api sent an invalid answer to the request to start the flow", transient=True) from exc
    if reply.error is not None or reply.run_id is None:
        raise CallRefused(reply.error or "The flow was not started", transient=reply.status >= 500)
    return reply


def _size(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace"))
    except (TypeError, ValueError, RecursionError):
        return CALL_RESULT_MAX_BYTES + 1


def callee_result(event: TaskEvent) -> dict[str, Any]:
    """What a called run hands back: ``{"status", "result", "error", "responded", "run_id", "flow_id",
    "flow_name"}``. ``result``: the first Respond step's body (it answered), else the last step's output."""
    result: Any = None
    responded = False
    for step in event.steps:
        output = step.output or {}
        if step.app == "respond" and step.status == "SUCCESS" and "result" in output:
            result, responded = output["result"], True
            break
    if not responded:
        ran = [step for step in event.steps if step.status != "SKIPPED"]
        result = ran[-1].output if ran else None
    error: str | None = None
    if event.status != "SUCCESS":
        failed = [step for step in event.steps if step.status == "ERROR" and not step.continued]
        error = event.refused or (failed[0].error if failed else None)
        if event.status == "CANCELLED":
            error = f"it was cancelled by {event.cancelled_by or 'a user'}"
    body: dict[str, Any] = {
        "status": event.status,
        "result": result,
        "error": (error or "")[:2000] or None,
        "responded": responded,
        "run_id": event.run_id,
        "flow_id": event.konnect_id,
        "flow_name": event.konnect_name,
    }
    size = _size(result)
    if size > CALL_RESULT_MAX_BYTES:
        body.update(
            status="ERROR",
            result=None,
            error=f"Its result is {size} bytes as JSON; a called flow hands back at most {CALL_RESULT_MAX_BYTES} bytes",
        )
    return body


async def report_end(js: JetStreamContext, waits: KeyValue | None, run: RunRequest, event: TaskEvent) -> None:
    """The called run ``run`` ended with ``event``: decide its caller's wait with the result (once). Raises
    when the wait could not be decided (NATS unavailable): the called run is then redelivered."""
    caller = run.called_by
    if caller is None or not caller.wait:
        return
    if waits is None:
        raise RuntimeError("the KZ_WAITS bucket is unavailable")
    body = callee_result(event)
    try:
        answer = await decide_call(js, waits, caller.konnect_id, caller.run_id, caller.step_id, body)
    except Unstorable as exc:  # the caller's stored run would grow too large with it
        body = {**body, "status": "ERROR", "result": None, "error": f"Its result cannot be handed back: {exc.message}"}
        answer = await decide_call(js, waits, caller.konnect_id, caller.run_id, caller.step_id, body)
    log.info(
        "Run %s (called by run %s, step %s) ended %s: its caller's wait answered %s",
        run.run_id,
        caller.run_id,
        caller.step_id,
        event.status,
        answer.status,
    )


class FlowCalls:
    """Starts the called runs of one run's Call a Flow steps (the engine's ``FLOW_CALLS``)."""

    def __init__(
        self,
        nc: Any,
        run: RunRequest,
        spec: FlowSpec,
        *,
        timeout: float = CALL_TIMEOUT_SECONDS,
        waits: KeyValue | None = None,
    ) -> None:
        self.nc = nc
        self.run = run
        self.spec = spec
        self.timeout = timeout
        self.waits = waits

    async def start(
        self, flow_id: int, arguments: dict[str, Any], *, step_id: str, wait: bool, item_index: int | None = None
    ) -> dict[str, Any]:
        if self.nc is None:
            raise CallRefused("No NATS connection to ask the api to start the flow", transient=True)
        above = self.run.called_by.depth if self.run.called_by is not None else 0
        caller = CallerLink(
            konnect_id=self.spec.konnect_id,
            konnect_name=self.spec.name[:200],
            run_id=self.run.run_id,
            step_id=step_id,
            wait=wait,
            depth=min(above + 1, 100),
        )
        run_id = called_run_id(self.run.run_id, step_id, item_index)
        started = await start_call(self.nc, caller, flow_id, arguments, run_id=run_id, wait_seconds=self.timeout)
        return {"run_id": started.run_id, "flow_id": started.flow_id, "flow_name": started.flow_name}

    async def call(self, flow_id: int, arguments: dict[str, Any], *, step_id: str, seconds: float) -> dict[str, Any]:
        """Start flow ``flow_id`` (run id :func:`called_run_id` of this run and ``step_id``: a redelivery
        starts the same run, stored once) and wait for its result, ``seconds`` at most (polling ``KZ_WAITS``
        for the early entry :func:`report_end` stores): :func:`callee_result`'s body. Raises
        :class:`CallRefused`, and :class:`TimeoutError` when it did not end in time."""
        if self.waits is None:
            raise CallRefused(
                "The KZ_WAITS bucket is unavailable: the called flow's result cannot be read", transient=True
            )
        deadline = time.monotonic() + seconds
        started = await self.start(flow_id, arguments, step_id=step_id, wait=True)
        key = wait_key(self.run.run_id, step_id)
        pause = POLL_FIRST
        while True:
            body = await self._result(key)
            if body is not None:
                try:
                    await self.waits.delete(key)
                except Exception as exc:  # it expires with the bucket's TTL
                    log.debug("Run %s: the result entry of %s was not deleted (%s)", self.run.run_id, step_id, exc)
                return {**body, "run_id": body.get("run_id") or started["run_id"]}
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the called run {started['run_id']} did not end within {seconds:g} s")
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, POLL_MAX)

    async def _result(self, key: str) -> dict[str, Any] | None:
        assert self.waits is not None
        try:
            entry = await self.waits.get(key)
        except KeyNotFoundError:
            return None
        except (nats.errors.Error, TimeoutError) as exc:  # NATS slow or restarting: look again
            log.debug("Run %s: reading a called run's result failed (%s)", self.run.run_id, exc)
            return None
        if not entry.value:
            return None
        try:
            found = WaitEntry.model_validate_json(entry.value)
        except ValidationError:
            return None
        return found.body if found.decided == "call" and found.body is not None else None
