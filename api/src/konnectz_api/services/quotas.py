"""Answers the runners' task-quota reservations (NATS request-reply on ``kz.quota.reserve``).

Every api replica subscribes in one queue group, so each request is answered once. A runner sends
the reservations of the runs it fetched together as one request on ``kz.quota.reserve_many``
(single ones on ``kz.quota.reserve``); all requests that arrive together are reserved together, in
one set-based transaction (:func:`konnectz_api.crud.quota.reserve_many`): under load one commit
and a handful of statements serve a whole batch instead of a round trip per run. The reservation
itself is :func:`konnectz_api.crud.quota.reserve`; the wire contract is :mod:`konnectz_runner.work.quota`.
"""

from __future__ import annotations

import asyncio
import logging

from nats.aio.msg import Msg
from pydantic import ValidationError
from sqlalchemy.orm import Session, sessionmaker

from konnectz_api.bus import Bus
from konnectz_api.crud import quota
from konnectz_contracts.quota import (
    QUOTA_MANY_SUBJECT,
    QUOTA_SUBJECT,
    QuotaReplies,
    QuotaReply,
    QuotaRequest,
    QuotaRequests,
)
from konnectz_runner import Outage

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
INVALID = QuotaReply(allowed=False, reason="Invalid quota request.")


def decide(sessions: sessionmaker[Session], requests: list[QuotaRequest | None]) -> list[QuotaReply]:
    """The replies to many requests (None: an invalid one), reserved in one transaction."""
    valid = [r for r in requests if r is not None]
    with sessions() as session:
        decided = iter(
            quota.reserve_many(session, requests=[(r.run_id, r.konnect_id, r.owner_id, r.tasks) for r in valid])
            if valid
            else []
        )
    out: list[QuotaReply] = []
    for request in requests:
        if request is None:
            out.append(INVALID)
            continue
        r = next(decided)
        out.append(
            QuotaReply(allowed=r.allowed, reason=r.reason, task_limit=r.task_limit, task_consumed=r.task_consumed)
        )
    return out


def _parse_one(data: bytes) -> QuotaRequest | None:
    try:
        return QuotaRequest.model_validate_json(data)
    except ValidationError:
        return None


def answer_many(sessions: sessionmaker[Session], datas: list[bytes]) -> list[QuotaReply]:
    """The replies to many single requests, reserved in one transaction."""
    return decide(sessions, [_parse_one(d) for d in datas])


def parse(msg: Msg) -> list[QuotaRequest | None] | None:
    """The reservations one message asks for; None for a batch that is not valid as a whole."""
    if msg.subject == QUOTA_MANY_SUBJECT:
        try:
            return list(QuotaRequests.model_validate_json(msg.data).requests)
        except ValidationError:
            return None
    return [_parse_one(msg.data)]


def reply_body(msg: Msg, replies: list[QuotaReply] | None) -> bytes:
    if msg.subject == QUOTA_MANY_SUBJECT:
        if replies is None:
            return QuotaReplies(replies=[]).model_dump_json().encode()  # the runner refuses a short answer
        return QuotaReplies(replies=replies).model_dump_json().encode()
    return (replies[0] if replies else INVALID).model_dump_json().encode()


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
            asked = [parse(m) for m in msgs]
            flat = [r for a in asked if a is not None for r in a]
            try:
                replies = await asyncio.to_thread(decide, sessions, flat) if flat else []
            except Exception as exc:  # the database is down: no answer, the runner retries the run later
                database.failed(exc)  # one line per outage, not a traceback per request
                continue
            database.ok()
            position = 0
            for msg, a in zip(msgs, asked, strict=True):
                mine = None if a is None else replies[position : position + len(a)]
                position += 0 if a is None else len(a)
                try:
                    await msg.respond(reply_body(msg, mine))
                except Exception as exc:  # the runner gave up waiting, or NATS went away: it asks again
                    log.debug("quota reply not sent: %s", exc)

    worker = asyncio.create_task(batches(), name="konnectz-quota-batches")
    sub = await bus.nc.subscribe(QUOTA_SUBJECT, queue=QUEUE, cb=handle)
    sub_many = await bus.nc.subscribe(QUOTA_MANY_SUBJECT, queue=QUEUE, cb=handle)
    try:
        await stop.wait()
    finally:
        worker.cancel()
        for subscription in (sub, sub_many):
            try:
                await subscription.unsubscribe()
            except Exception:  # noqa: S110 - the connection is closing anyway
                pass
