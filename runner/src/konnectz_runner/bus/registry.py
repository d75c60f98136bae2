"""Which konnects this runner serves: trigger token (webhook, form) -> FlowSpec, konnect id -> FlowSpec.

Filled from the ``KZ_KONNECTS`` KV bucket (watched, so publishing, updating or unpublishing a
konnect takes effect without a restart) or, in Kubernetes mode, from one mounted spec file.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from pathlib import Path

from nats.js.kv import KV_DEL, KV_PURGE, KeyValue
from pydantic import ValidationError

from konnectz_contracts.broker_token import forget_resource_uid, remember_resource_uid
from konnectz_contracts.errors import ConfigError
from konnectz_contracts.spec import FlowSpec

__all__ = ["KonnectRegistry", "load_spec_file", "watch_konnects"]

log = logging.getLogger(__name__)
KEY_PREFIX = "konnect."


def load_spec_file(path: Path, trigger_token: str = "") -> FlowSpec:
    """The flow spec in ``path``; a webhook or form trigger gets ``trigger_token`` (Kubernetes: the
    operator's ConfigMap carries no token, the runner reads it from the Konnect's Secret)."""
    try:
        data = json.loads(path.read_bytes())
        trigger = data.get("trigger") if isinstance(data, dict) else None
        if trigger_token and isinstance(trigger, dict) and trigger.get("kind") in ("webhook", "form"):
            trigger["token"] = trigger_token
        return FlowSpec.model_validate(data)
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            raise ConfigError(f"The spec file {path} is not a valid flow spec: {exc}") from exc
        raise ConfigError(f"The spec file {path} is not JSON: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read the spec file {path}: {exc}") from exc
    except ValidationError as exc:
        raise ConfigError(f"The spec file {path} is not a valid flow spec: {exc}") from exc


def _token(spec: FlowSpec) -> str | None:
    """The URL token of a trigger that has one (webhook, form); schedules have none."""
    token = getattr(spec.trigger, "token", None)
    return token if isinstance(token, str) else None


# Parsed specs of webhook konnects kept as their JSON (see KonnectRegistry), most recently used first.
# Keyed by the JSON itself, so a republished konnect (other bytes) is never served from a stale entry;
# functools' cache is safe to share between the ingress loop and the worker thread.
LAZY_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=LAZY_CACHE_SIZE)
def _parsed(raw: bytes) -> FlowSpec:
    return FlowSpec.model_validate_json(raw)


class KonnectRegistry:
    """The konnects of this runner, by id and by trigger token.

    A parsed :class:`FlowSpec` takes about ten times the memory of its JSON (6 KiB against 0.6 KiB
    for a three-step flow), and a runner can host 100,000 konnects, most of them webhooks that are
    rarely called. So a webhook konnect put with its ``raw`` JSON (as the KV watcher does, after
    validating it) is kept as that JSON and parsed again when used (an LRU cache of
    ``LAZY_CACHE_SIZE`` keeps the busy ones parsed). Konnects whose trigger the runner drives itself
    (schedules, polls, forms) stay parsed: :meth:`specs` returns them to the scheduler and the poller.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, FlowSpec | bytes] = {}
        self._by_token: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def put(self, spec: FlowSpec, raw: bytes | None = None) -> None:
        self.remove(spec.konnect_id)
        lazy = raw is not None and spec.trigger.kind == "webhook"
        self._by_id[spec.konnect_id] = raw if lazy and raw is not None else spec
        token = _token(spec)
        if token is not None:
            self._by_token[token] = spec.konnect_id
        # The shared pool derives the konnect's broker token from the key and its resource's UID.
        remember_resource_uid(spec.konnect_id, spec.resource_uid)

    def remove(self, konnect_id: int) -> None:
        old = self._by_id.pop(konnect_id, None)
        if old is None:
            return
        forget_resource_uid(konnect_id)
        spec = _parsed(old) if isinstance(old, bytes) else old
        token = _token(spec)
        if token is not None and self._by_token.get(token) == konnect_id:
            del self._by_token[token]

    def replace_all(self, other: KonnectRegistry) -> None:
        """Serve exactly what ``other`` holds (the watcher's first full load)."""
        self._by_id = dict(other._by_id)
        self._by_token = dict(other._by_token)

    def specs(self) -> list[FlowSpec]:
        """The konnects kept parsed: every one whose trigger is not a webhook (schedules, polls, forms),
        and webhooks put without their JSON (a mounted spec file, tests)."""
        return [s for s in self._by_id.values() if isinstance(s, FlowSpec)]

    def by_token(self, token: str) -> FlowSpec | None:
        konnect_id = self._by_token.get(token)
        return None if konnect_id is None else self.by_id(konnect_id)

    def by_id(self, konnect_id: int) -> FlowSpec | None:
        entry = self._by_id.get(konnect_id)
        return _parsed(entry) if isinstance(entry, bytes) else entry


def _konnect_id(key: str) -> int | None:
    if not key.startswith(KEY_PREFIX):
        return None
    try:
        return int(key[len(KEY_PREFIX) :])
    except ValueError:
        return None


def apply_entry(registry: KonnectRegistry, key: str, value: bytes | None, operation: str | None) -> None:
    """Apply one KV change to the registry."""
    konnect_id = _konnect_id(key)
    if konnect_id is None:
        log.warning("Ignoring KV key %r: expected konnect.<id>", key)
        return
    if operation in (KV_DEL, KV_PURGE) or not value:
        registry.remove(konnect_id)
        log.info("Konnect %s unpublished", konnect_id)
        return
    try:
        spec = FlowSpec.model_validate_json(value)
    except ValidationError as exc:
        # Serving a stale version would run something that is no longer published.
        registry.remove(konnect_id)
        log.error("Konnect %s: invalid flow spec in KV, not served: %s", konnect_id, exc)
        return
    if spec.konnect_id != konnect_id:
        registry.remove(konnect_id)
        log.error("Konnect %s: KV value carries konnect_id %s, not served", konnect_id, spec.konnect_id)
        return
    registry.put(spec, raw=bytes(value))
    log.info("Konnect %s (%s) published", konnect_id, spec.name)


async def watch_konnects(kv: KeyValue, registry: KonnectRegistry, ready: asyncio.Event) -> None:
    """Follow the bucket forever. The current values are loaded first, then ``ready`` is set."""
    initial = KonnectRegistry()
    loading = True
    watcher = await kv.watchall()
    try:
        async for entry in watcher:
            if entry is None:  # all current values delivered
                if loading:
                    registry.replace_all(initial)
                    loading = False
                    ready.set()
                continue
            apply_entry(initial if loading else registry, entry.key, entry.value, entry.operation)
    finally:
        try:
            await watcher.stop()
        except Exception:  # the connection may already be gone
            log.debug("Stopping the KV watcher failed", exc_info=True)
