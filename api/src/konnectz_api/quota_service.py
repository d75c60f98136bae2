"""Answers the runners' task-quota reservations (NATS request-reply on ``kz.quota.reserve``).

Every api replica subscribes in one queue group, so each request is answered once. Requests that
arrive together are reserved together, in one transaction (:func:`konnectz_api.crud.quota.reserve_many`):
under load one commit serves a whole batch instead of one per run. The reservation
itself is :func:`konnectz_api.crud.quota.reserve`; the wire contract is :mod:`konnectz_runner.quota`.
"""

from __future__ import annotations

import asyncio
import logging

from nats.aio.msg import Msg
from pydantic import ValidationError
from sqlalchemy.orm import Session, sessionmaker

from konnectz_api.bus import Bus
from konnectz_api.crud import quota
from konnectz_runner.outage import Outage
from konnectz_runner.quota import QUOTA_SUBJECT, QuotaReply, QuotaRequest

log = logging.getLogger(__name__)
QUEUE = "api-quota"


def answer(sessions: sessionmaker[Session], data: bytes) -> QuotaReply:
    try:
        request = QuotaRequest.model_validate_json(data)
    except ValidationError:
        return QuotaReply(allowed=False, reason="Invalid quota request.")
    with sessions() as session:
        r = quota.reserve(
            session,
            run_id=request.run_id,
            konnect_id=request.konnect_id,
            owner_id=request.owner_id,
            tasks=request.tasks,
        )
    return QuotaReply(allowed=r.allowed, reason=r.reason, task_limit=r.task_limit, task_consumed=r.task_consumed)


BATCH = 500


def answer_many(sessions: sessionmaker[Session], datas: list[bytes]) -> list[QuotaReply]:
    """The replies to many requests, reserved in one transaction."""
    replies: list[QuotaReply | None] = []
    valid: list[QuotaRequest] = []
    for data in datas:
        try:
            valid.append(QuotaRequest.model_validate_json(data))
            replies.append(None)
        except ValidationError:
            replies.append(QuotaReply(allowed=False, reason="Invalid quota request."))
    with sessions() as session:
        decided = iter(
            quota.reserve_many(session, requests=[(r.run_id, r.konnect_id, r.owner_id, r.tasks) for r in valid])
            if valid
            else []
        )
    out: list[QuotaReply] = []
    for reply in replies:
        if reply is None:
            r = next(decided)
            reply = QuotaReply(
                allowed=r.allowed, reason=r.reason, task_limit=r.task_limit, task_consumed=r.task_consumed
            )
        out.append(reply)
    return out


async def serve_quota(bus: Bus, sessions: sessionmaker[Session], stop: asyncio.Event) -> None:
    """Subscribe once NATS is up (nats-py re-subscribes after reconnects) and answer until ``stop``."""
    await bus.ready.wait()
    assert bus.nc is not None
    queue: asyncio.Queue[Msg] = asyncio.Queue()
    database = Outage("Task quota reservations (database)", log)

    async def handle(msg: Msg) -> None:
        queue.put_nowait(msg)

    async def batches() -> None:
        while True:
            msgs = [await queue.get()]
            while len(msgs) < BATCH and not queue.empty():
                msgs.append(queue.get_nowait())
            try:
                replies = await asyncio.to_thread(answer_many, sessions, [m.data for m in msgs])
            except Exception as exc:  # the database is down: no answer, the runner retries the run later
                database.failed(exc)  # one line per outage, not a traceback per request
                continue
            database.ok()
            for msg, reply in zip(msgs, replies, strict=True):
                await msg.respond(reply.model_dump_json().encode())

    worker = asyncio.create_task(batches(), name="konnectz-quota-batches")
    sub = await bus.nc.subscribe(QUOTA_SUBJECT, queue=QUEUE, cb=handle)
    try:
        await stop.wait()
    finally:
        worker.cancel()
        try:
            await sub.unsubscribe()
        except Exception:  # noqa: S110 - the connection is closing anyway
            pass
