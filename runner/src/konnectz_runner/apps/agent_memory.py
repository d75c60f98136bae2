"""The Agent step's memory (docs/ai.md): a conversation's earlier turns, kept by the api in PostgreSQL.

``POST .../internal/agent_memory/load`` and ``.../internal/agent_memory/save`` beside
``KONNECTZ_CREDENTIALS_URL``, with the konnect-scoped token (:mod:`konnectz_contracts.broker_token`), like
the credential broker and approvals: a runner reads and writes only the conversations of the konnect its
token names (and so of its owner). A turn is saved under its ``turn_key`` (run, step, item): saving it
again (a redelivered run) changes nothing, and loading leaves that turn out, so a redelivery sees the
conversation as the first delivery did. The api bounds a conversation
(:data:`~konnectz_contracts.limits.AGENT_MEMORY_MAX_TURNS`, :data:`~konnectz_contracts.limits.AGENT_MEMORY_MAX_BYTES`)
by dropping its oldest whole turns: a tool call is never kept without its result.

:func:`set_memory_source` replaces the broker (tests).
"""

from __future__ import annotations

import os
from typing import Any, Protocol

import httpx

from konnectz_contracts.broker_token import ENV_KEY, ENV_TOKEN, ENV_URL, token_for
from konnectz_contracts.errors import StepError

__all__ = ["BrokerMemory", "MemorySource", "memory_source", "memory_url", "set_memory_source"]

#: How long one call to the api may take.
TIMEOUT_SECONDS = 20.0


class MemorySource(Protocol):
    async def load(self, konnect_id: int, key: str, turn_key: str) -> list[dict[str, Any]]:
        """The conversation's messages, oldest first, without the turn ``turn_key``."""
        ...

    async def save(self, konnect_id: int, key: str, turn_key: str, messages: list[dict[str, Any]]) -> None:
        """Add one turn's messages (once per ``turn_key``)."""
        ...


def memory_url(credentials_url: str, action: str) -> str:
    """``.../internal/credentials`` → ``.../internal/agent_memory/<action>``."""
    return credentials_url.rstrip("/").rsplit("/", 1)[0] + f"/agent_memory/{action}"


class BrokerMemory:
    """The api's broker door."""

    async def _post(self, konnect_id: int, action: str, body: dict[str, Any]) -> Any:
        url = os.environ.get(ENV_URL)
        token = token_for(konnect_id)
        if not url or not token:
            raise StepError(
                f"No api broker configured ({ENV_URL} and {ENV_TOKEN} or {ENV_KEY} must be set): "
                "the agent's memory cannot be read or kept"
            )
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS) as http:
                response = await http.post(
                    memory_url(url, action), json=body, headers={"Authorization": f"Bearer {token}"}
                )
        except httpx.HTTPError as exc:
            raise StepError(f"The agent's memory could not be reached ({exc.__class__.__name__})") from exc
        if response.status_code != 200:
            try:
                reason = response.json().get("message") or response.text
            except ValueError:
                reason = response.text
            raise StepError(f"The agent's memory refused (HTTP {response.status_code}): {str(reason)[:300]}")
        return response.json()

    async def load(self, konnect_id: int, key: str, turn_key: str) -> list[dict[str, Any]]:
        reply = await self._post(konnect_id, "load", {"konnect_id": konnect_id, "key": key, "turn_key": turn_key})
        messages = reply.get("messages") if isinstance(reply, dict) else None
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    async def save(self, konnect_id: int, key: str, turn_key: str, messages: list[dict[str, Any]]) -> None:
        body = {"konnect_id": konnect_id, "key": key, "turn_key": turn_key, "messages": messages}
        await self._post(konnect_id, "save", body)


_source: MemorySource | None = None


def set_memory_source(source: MemorySource | None) -> None:
    global _source
    _source = source


def memory_source() -> MemorySource:
    return _source or BrokerMemory()
