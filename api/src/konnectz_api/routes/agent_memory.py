"""The AI Agent step's memory (docs/ai.md): a runner reads and keeps a conversation's turns.

- ``POST /api/v1/internal/agent_memory/load`` (a runner, with the konnect's scoped token): the messages of
  the conversation ``key`` of that konnect, oldest first, leaving out the turn ``turn_key`` (the run's own,
  when it is redelivered after saving it).
- ``POST /api/v1/internal/agent_memory/save``: adds one turn (its messages: the prompt, the tool calls and
  their results, the answer) once per ``turn_key``; then the conversation keeps its newest
  :data:`AGENT_MEMORY_MAX_TURNS` turns within :data:`AGENT_MEMORY_MAX_BYTES`, dropping the oldest whole
  turns (a tool call is never kept without its result).

A conversation belongs to one konnect (and so to its owner): the token names the konnect, the rows are
found by (konnect, sha256 of the key). A turn larger than the bounds is refused (413); the runner cuts
its tool results before saving.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.core.config import Settings
from konnectz_api.db import run_db
from konnectz_api.deps import SessionDep, SettingsDep
from konnectz_api.errors import PayloadTooLarge
from konnectz_api.models import AgentMemory
from konnectz_api.routes.credentials import Bearer, _scoped_konnect
from konnectz_contracts.limits import AGENT_MEMORY_MAX_BYTES, AGENT_MEMORY_MAX_TURNS

__all__ = ["router"]

router = APIRouter(prefix="/api/v1/internal/agent_memory", tags=["internal"])

#: Messages in one turn: the prompt, 50 iterations of an assistant message and up to 20 tool results, the answer.
MAX_TURN_MESSAGES = 1200


class MemoryLoad(BaseModel):
    konnect_id: int = Field(ge=1, lt=2**63)
    key: str = Field(min_length=1, max_length=500)
    turn_key: str = Field(min_length=1, max_length=64)


class MemorySave(MemoryLoad):
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_TURN_MESSAGES)


class MemoryMessages(BaseModel):
    messages: list[dict[str, Any]]
    turns: int


class MemorySaved(BaseModel):
    turns: int
    dropped: int


def _conversation(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _load(session: Session, settings: Settings, creds: Bearer, body: MemoryLoad) -> MemoryMessages:
    konnect = _scoped_konnect(session, settings, creds, body.konnect_id)
    rows = session.scalars(
        select(AgentMemory.messages)
        .where(
            AgentMemory.konnect_id == konnect.id,
            AgentMemory.conversation == _conversation(body.key),
            AgentMemory.turn_key != body.turn_key,
        )
        .order_by(AgentMemory.id)
    ).all()
    return MemoryMessages(messages=[m for turn in rows for m in turn], turns=len(rows))


def _save(session: Session, settings: Settings, creds: Bearer, body: MemorySave) -> MemorySaved:
    konnect = _scoped_konnect(session, settings, creds, body.konnect_id)
    size = len(json.dumps(body.messages, ensure_ascii=False).encode())
    if size > AGENT_MEMORY_MAX_BYTES:
        raise PayloadTooLarge(
            f"One turn of an agent's memory is at most {AGENT_MEMORY_MAX_BYTES // 1024} KiB (this one has {size} bytes)"
        )
    conversation = _conversation(body.key)
    session.execute(
        insert(AgentMemory)
        .values(
            konnect_id=konnect.id,
            owner_id=konnect.owner_id,
            conversation=conversation,
            turn_key=body.turn_key,
            messages=body.messages,
            bytes=size,
        )
        .on_conflict_do_nothing(constraint="uq_agent_memory_turn")
    )
    turns = session.execute(
        select(AgentMemory.id, AgentMemory.bytes)
        .where(AgentMemory.konnect_id == konnect.id, AgentMemory.conversation == conversation)
        .order_by(AgentMemory.id.desc())
        .with_for_update()
    ).all()
    kept, total = 0, 0
    for _id, turn_bytes in turns:
        if kept >= AGENT_MEMORY_MAX_TURNS or total + turn_bytes > AGENT_MEMORY_MAX_BYTES:
            break
        kept, total = kept + 1, total + turn_bytes
    dropped = [row_id for row_id, _ in turns[kept:]]
    if dropped:
        session.execute(delete(AgentMemory).where(AgentMemory.id.in_(dropped)))
    return MemorySaved(turns=kept, dropped=len(dropped))


@router.post("/load", response_model=MemoryMessages, summary="An agent's conversation (a runner, scoped token)")
async def load(body: MemoryLoad, session: SessionDep, settings: SettingsDep, creds: Bearer) -> MemoryMessages:
    return await run_db(session, _load, settings, creds, body)


@router.post("/save", response_model=MemorySaved, summary="Keep one turn of an agent's conversation (scoped token)")
async def save(body: MemorySave, session: SessionDep, settings: SettingsDep, creds: Bearer) -> MemorySaved:
    return await run_db(session, _save, settings, creds, body)
