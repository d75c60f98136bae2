"""Task quotas, seen from the runner: before a run executes, it reserves its tasks with the api.

The wire (subjects, bucket, models) is :mod:`konnectz_contracts.quota`.

The api owns the quota (``users.task_limit`` / ``task_consumed`` in PostgreSQL); the runner never reads
that database. Over NATS request-reply on :data:`QUOTA_SUBJECT` the runner sends a :class:`QuotaRequest`
(one task per action step of the flow) and the api answers with a :class:`QuotaReply`:

- ``allowed``: the tasks were added to ``task_consumed`` in one conditional UPDATE (atomic against
  concurrent runs) and remembered under ``run_id``; asking again for the same run (a redelivery)
  answers ``allowed`` without counting twice. When the run's task event arrives, the api settles the
  reservation against the actions that really ran (fewer after a filter stop or an error, more after
  an iterator).
- refused: ``reason`` says why; the worker turns the run into an ERROR task log carrying that reason
  (:func:`refused_event`), so a refused run is never dropped silently.

When no api answers (:class:`QuotaUnavailable`), the worker retries the run later; on its last delivery
it is refused with that reason (fail closed).

Refused at ingress: when a run is refused because its owner has no task left, the worker records a
block (key ``owner.<id>`` in the ``KZ_QUOTA_BLOCKS`` bucket, kept :data:`BLOCK_SECONDS`). While it
holds, the owner's webhooks and forms are answered ``402`` with the reason and nothing is stored
(:class:`QuotaBlocks` follows the bucket, so ingress asks nothing per request). So a sender over
quota costs at most one refused run (a task log without its body) per owner every
:data:`BLOCK_SECONDS`; a new plan or a new month takes effect within that time.

Batching: the runs a worker fetched together ask together. :class:`NatsQuotaGate` collects the
reservations requested in the same turn of the event loop and sends them as one
:class:`QuotaRequests` on :data:`QUOTA_MANY_SUBJECT`; the api decides them in order in one
transaction and answers one :class:`QuotaReplies` (same order). An api without that subject (an
older one) is asked one request at a time on :data:`QUOTA_SUBJECT`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

import nats.errors
from nats.aio.client import Client as NATS
from nats.js.kv import KeyValue
from pydantic import ValidationError

from konnectz_contracts.events import RunRequest, TaskEvent
from konnectz_contracts.quota import (
    BLOCK_SECONDS,
    MAX_BATCH,
    QUOTA_MANY_SUBJECT,
    QUOTA_SUBJECT,
    QuotaBlock,
    QuotaReplies,
    QuotaReply,
    QuotaRequest,
    QuotaRequests,
)
from konnectz_contracts.spec import FlowSpec
from konnectz_runner.work.failed_runs import runner_error_event

__all__ = [
    "NatsQuotaGate",
    "QuotaBlocks",
    "QuotaGate",
    "QuotaUnavailable",
    "block_owner",
    "exhausted",
    "refused_event",
    "tasks_of",
]


class QuotaUnavailable(Exception):
    """No api answered the reservation in time (or answered nonsense)."""


class QuotaGate(Protocol):
    async def reserve(self, run: RunRequest, spec: FlowSpec) -> QuotaReply: ...


def tasks_of(spec: FlowSpec) -> int:
    """The tasks a run of ``spec`` reserves: one per action step (an iterator's extra passes are settled later)."""
    return len(spec.steps)


class NatsQuotaGate:
    """Reserves over NATS request-reply; the reservations asked in one loop turn go in one request."""

    def __init__(
        self,
        nc: NATS,
        *,
        timeout: float = 5.0,
        subject: str = QUOTA_SUBJECT,
        many_subject: str | None = QUOTA_MANY_SUBJECT,
    ) -> None:
        self.nc = nc
        self.timeout = timeout
        self.subject = subject
        self.many_subject = many_subject  # None: one request per run
        self._pending: list[tuple[QuotaRequest, asyncio.Future[QuotaReply]]] = []
        self._flush: asyncio.Task[None] | None = None
        self.requests_sent = 0

    async def reserve(self, run: RunRequest, spec: FlowSpec) -> QuotaReply:
        request = QuotaRequest(
            run_id=run.run_id, konnect_id=spec.konnect_id, owner_id=spec.owner_id, tasks=tasks_of(spec)
        )
        if self.many_subject is None:
            return await self._one(request)
        future: asyncio.Future[QuotaReply] = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        if self._flush is None:
            self._flush = asyncio.create_task(self._send_pending())
        return await future

    async def _send_pending(self) -> None:
        await asyncio.sleep(0)  # let the other runs fetched with this one ask too
        pending, self._pending, self._flush = self._pending, [], None
        for start in range(0, len(pending), MAX_BATCH):
            chunk = pending[start : start + MAX_BATCH]
            try:
                replies = await self._many([r for r, _ in chunk])
            except Exception as exc:  # QuotaUnavailable, or anything unexpected: each run hears it
                for _, future in chunk:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), reply in zip(chunk, replies, strict=True):
                if not future.done():
                    future.set_result(reply)

    async def _many(self, requests: list[QuotaRequest]) -> list[QuotaReply]:
        assert self.many_subject is not None
        if len(requests) == 1:
            return [await self._one(requests[0])]
        body = QuotaRequests(requests=requests).model_dump_json().encode()
        try:
            self.requests_sent += 1
            msg = await self.nc.request(self.many_subject, body, timeout=self.timeout)
        except nats.errors.NoRespondersError:  # an api that answers only one at a time
            return list(await asyncio.gather(*(self._one(r) for r in requests)))
        except (nats.errors.TimeoutError, TimeoutError) as exc:
            raise QuotaUnavailable(f"no quota service answered on {self.many_subject} ({type(exc).__name__})") from exc
        except nats.errors.Error as exc:
            raise QuotaUnavailable(f"NATS: {exc}") from exc
        try:
            replies = QuotaReplies.model_validate_json(msg.data).replies
        except ValidationError as exc:
            raise QuotaUnavailable("the quota service sent an invalid reply") from exc
        if len(replies) != len(requests):
            raise QuotaUnavailable("the quota service answered a different number of reservations")
        return replies

    async def _one(self, request: QuotaRequest) -> QuotaReply:
        try:
            self.requests_sent += 1
            msg = await self.nc.request(self.subject, request.model_dump_json().encode(), timeout=self.timeout)
        except (nats.errors.NoRespondersError, nats.errors.TimeoutError, TimeoutError) as exc:
            raise QuotaUnavailable(f"no quota service answered on {self.subject} ({type(exc).__name__})") from exc
        except nats.errors.Error as exc:
            raise QuotaUnavailable(f"NATS: {exc}") from exc
        try:
            return QuotaReply.model_validate_json(msg.data)
        except ValidationError as exc:
            raise QuotaUnavailable("the quota service sent an invalid reply") from exc


def refused_event(spec: FlowSpec, run: RunRequest, reason: str) -> TaskEvent:
    """The ERROR task event of a run that was refused before any step ran; it counts no task. Its
    request is not kept (only that it was refused and why): a sender over quota cannot fill the
    history with bodies."""
    return runner_error_event(
        run,
        reason,
        konnect_id=spec.konnect_id,
        owner_id=spec.owner_id,
        konnect_name=spec.name,
        trigger_id=spec.trigger_id,
        trigger_output={"refused": True, "message": "The run was refused, so its request was not kept."},
        step_id="quota",  # not the trigger's id: the task log keeps the trigger's note beside the reason
        step_name="Task quota",
        app="quota",
        refused=reason,
    )


def exhausted(reply: QuotaReply) -> bool:
    """A refusal because the owner has no task left at all (not merely too few for this run)."""
    return not reply.allowed and reply.task_limit > 0 and reply.task_consumed >= reply.task_limit


def _block_key(owner_id: int) -> str:
    return f"owner.{int(owner_id)}"


async def block_owner(kv: KeyValue, owner_id: int, reason: str, *, seconds: float = BLOCK_SECONDS) -> None:
    """Refuse ``owner_id``'s webhooks and forms at ingress for ``seconds`` (see the module)."""
    block = QuotaBlock(owner_id=owner_id, reason=reason, until=time.time() + seconds)
    await kv.put(_block_key(owner_id), block.model_dump_json().encode())


class QuotaBlocks:
    """The owners refused at ingress, followed by watching ``KZ_QUOTA_BLOCKS`` (entries expire there
    without telling watchers: each carries its own end)."""

    def __init__(self) -> None:
        self._blocks: dict[int, QuotaBlock] = {}

    def reason(self, owner_id: int) -> str | None:
        """Why ``owner_id``'s runs are refused now, or None."""
        block = self._blocks.get(owner_id)
        if block is None:
            return None
        if block.until <= time.time():
            self._blocks.pop(owner_id, None)
            return None
        return block.reason

    def note(self, block: QuotaBlock) -> None:
        self._blocks[block.owner_id] = block

    async def follow(self, kv: KeyValue) -> None:
        """Follow the bucket until cancelled (the caller restarts it after a failure)."""
        from nats.js.kv import KV_DEL, KV_PURGE

        watcher = await kv.watchall()
        try:
            async for entry in watcher:
                if entry is None:
                    continue
                if entry.operation in (KV_DEL, KV_PURGE) or not entry.value:
                    self._blocks.pop(int(entry.key.removeprefix("owner.")), None)
                    continue
                try:
                    self.note(QuotaBlock.model_validate_json(entry.value))
                except ValueError:
                    continue
        finally:
            try:
                await watcher.stop()
            except Exception:  # noqa: S110 - the connection may already be gone
                pass
