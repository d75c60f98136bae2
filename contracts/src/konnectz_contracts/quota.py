"""Task quotas on the wire: the runner reserves a run's tasks with the api over NATS request-reply.

The runner sends a :class:`QuotaRequest` on :data:`QUOTA_SUBJECT` (or the runs of one fetch as one
:class:`QuotaRequests` on :data:`QUOTA_MANY_SUBJECT`, at most :data:`MAX_BATCH`) and the api answers a
:class:`QuotaReply` (a :class:`QuotaReplies`, in the same order). An owner without tasks left is
refused at ingress while a :class:`QuotaBlock` is kept in ``KZ_QUOTA_BLOCKS`` (:data:`BLOCK_SECONDS`).
The gate, the batching and the blocks' follower are the runner's ``quota`` module; the answering
side is the api's ``services/quotas.py``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BLOCK_SECONDS",
    "KV_QUOTA_BLOCKS",
    "MAX_BATCH",
    "QUOTA_MANY_SUBJECT",
    "QUOTA_SUBJECT",
    "QuotaBlock",
    "QuotaReplies",
    "QuotaReply",
    "QuotaRequest",
    "QuotaRequests",
]

QUOTA_SUBJECT = "kz.quota.reserve"
QUOTA_MANY_SUBJECT = "kz.quota.reserve_many"
#: Reservations sent in one request at most.
MAX_BATCH = 500
KV_QUOTA_BLOCKS = "KZ_QUOTA_BLOCKS"
#: How long an owner without tasks left is refused at ingress before a run may ask the api again.
BLOCK_SECONDS = 60.0


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QuotaRequest(_Wire):
    run_id: str = Field(min_length=1, max_length=200)
    konnect_id: int = Field(ge=1, lt=2**63)
    owner_id: int = Field(ge=1, lt=2**63)
    tasks: int = Field(ge=0, le=1_000_000)


class QuotaReply(_Wire):
    allowed: bool
    reason: str | None = None
    task_limit: int = 0
    task_consumed: int = 0


class QuotaRequests(_Wire):
    requests: list[QuotaRequest] = Field(min_length=1, max_length=MAX_BATCH)


class QuotaReplies(_Wire):
    replies: list[QuotaReply]


class QuotaBlock(_Wire):
    owner_id: int
    reason: str
    until: float  # epoch seconds
