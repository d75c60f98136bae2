"""``Idempotency-Key`` on webhooks: a retried call starts no second run.

A webhook sender may send ``Idempotency-Key: <any text up to 255 characters>`` (as Stripe's API
accepts). The first call with a key for a konnect starts a run; every later call with the same key
for the same konnect within :data:`~konnectz_contracts.events.IDEMPOTENCY_RETENTION_SECONDS` answers 200
with the *first* run's id and the header ``Idempotent-Replayed: true``, and starts nothing.

How, in the ``KZ_IDEMPOTENCY`` key/value bucket (entries expire after the retention):

1. ``claim``: ``create`` the entry ``k<konnect_id>.<sha256(key)>`` = ``{"run_id", "stored": false}``.
   ``create`` is atomic, so of two concurrent calls one wins and the other reads the winner's run id.
2. The run is published with ``Nats-Msg-Id = run_id`` (the winner's), then the entry is marked
   ``stored``.
3. A later call that finds a ``stored`` entry answers at once. One that finds an entry not yet
   stored (the first call is still publishing, or failed with a 503) publishes its run under the
   *first* run id: JetStream stores one message per ``Nats-Msg-Id`` within its duplicate window,
   so at most one run exists for the key, and a first call that failed is completed by the retry.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass

from nats.js.errors import KeyWrongLastSequenceError
from nats.js.kv import KeyValue

__all__ = ["HEADER", "MAX_KEY_LENGTH", "Claim", "check_key", "claim", "stored"]

log = logging.getLogger(__name__)

HEADER = "idempotency-key"
MAX_KEY_LENGTH = 255


def check_key(raw: str) -> str | None:
    """Why ``raw`` is not an acceptable key (a message for a 400), or None when it is."""
    if not raw.strip():
        return "Idempotency-Key must not be empty"
    if len(raw) > MAX_KEY_LENGTH:
        return f"Idempotency-Key must be at most {MAX_KEY_LENGTH} characters"
    if any(not (0x20 <= ord(c) < 0x7F) for c in raw):
        return "Idempotency-Key must be printable ASCII"
    return None


def entry_key(konnect_id: int, key: str) -> str:
    return f"k{int(konnect_id)}.{hashlib.sha256(key.encode()).hexdigest()[:48]}"


@dataclass(frozen=True)
class Claim:
    run_id: str  # the run the key belongs to (ours when ``first``)
    first: bool  # this call created the entry
    stored: bool  # the key's run is known to be stored in KZ_RUNS
    revision: int


async def claim(kv: KeyValue, *, konnect_id: int, key: str, run_id: str) -> Claim:
    """Claim ``key`` for ``run_id``, or return the run the key already belongs to."""
    name = entry_key(konnect_id, key)
    value = json.dumps({"run_id": run_id, "stored": False}).encode()
    try:
        revision = await kv.create(name, value)
        return Claim(run_id=run_id, first=True, stored=False, revision=revision)
    except KeyWrongLastSequenceError:
        pass
    entry = await kv.get(name)
    data = json.loads(entry.value or b"{}")
    return Claim(run_id=str(data["run_id"]), first=False, stored=bool(data.get("stored")), revision=entry.revision or 0)


async def stored(kv: KeyValue, *, konnect_id: int, key: str, claimed: Claim) -> None:
    """Mark the key's run as stored (best effort: a retry then publishes it once more, deduplicated)."""
    value = json.dumps({"run_id": claimed.run_id, "stored": True}).encode()
    try:
        await kv.update(entry_key(konnect_id, key), value, last=claimed.revision)
    except KeyWrongLastSequenceError:
        pass  # a concurrent retry marked it
    except Exception as exc:
        log.warning("Idempotency key of run %s not marked stored: %s", claimed.run_id, exc or type(exc).__name__)
