"""Polling trigger: list an app's recent items every ``interval_seconds`` and run once per new item.

Two sources of items:

- ``url``: a self-contained request (method, URL, headers, params) whose JSON reply holds the list
  at ``items_path``; the runner needs no manifest to poll it.
- ``app_id`` + ``event``: a catalogue app's trigger event (``trigger: {type: polling}`` in its
  manifest), compiled by the api (``konnectz_api.compile.compilers``). The poller runs that
  manifest event through the generic HTTP step of :mod:`konnectz_runner.engine.steps.app_event`: the
  account's credentials are fetched from the api's credential broker at poll time with the
  konnect-scoped token, injected where the app's auth says, 429/5xx are retried honouring
  ``Retry-After``, pages are followed per the event's pagination, and an expired OAuth2 token is
  refreshed once. The list is the event's ``output.items_path``.

De-duplication (:func:`new_items`) keeps a :class:`Cursor` per konnect:

- ``dedupe: "id"``: the ids seen recently (at most ``max_seen``, the newest kept); an item whose id
  (``id_path``) is not among them is new.
- ``dedupe: "timestamp"``: the newest timestamp seen (``timestamp_path``, ISO 8601 or a number); an
  item newer than it is new. With ``since_param`` the request asks the app only for items since it.

The first poll only records what exists: no run starts for items that were there before the
konnect was published (as Zapier does when a Zap is turned on). Taking the newest item instead would
act on something old the moment a flow is switched on (a second welcome mail, a duplicated order);
the data to map fields from comes from Test & Review, which shows the newest item of the live API.
A cursor of another source (:func:`fingerprint`: another URL, event, account or field values after
re-publishing) is dropped, and that first poll records again.

New items run oldest first when the reply is sorted newest first (timestamps decide when present;
otherwise the reply order is kept). At most ``max_items_per_poll`` runs start per
poll; the rest stay new for the next poll only under timestamp dedupe, so keep the interval short
enough for the app's volume.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any, Literal

from dateutil import parser as date_parser
from pydantic import AwareDatetime, Field, model_validator

from konnectz_contracts.model import KeyValue, Strict
from konnectz_contracts.refs import lookup

__all__ = ["Cursor", "PollingTrigger", "fingerprint", "item_key", "new_items", "newest_item", "pick_new", "since_value"]


class PollingTrigger(Strict):
    """Runs start for the new items of ``method url`` (``items_path`` in its JSON reply), or of a
    catalogue app's trigger event (``app_id``, ``event``, ``account_id``, ``fields``)."""

    kind: Literal["polling"] = "polling"
    app: str = Field(default="", max_length=100, description="Catalogue app key (for logs and the editor)")
    event: str = Field(default="", max_length=100, description="Catalogue trigger event key")
    app_id: int | None = Field(
        default=None, ge=1, lt=2**31, description="Catalogue app whose trigger ``event`` is polled (instead of url)"
    )
    account_id: int | None = Field(
        default=None, ge=1, lt=2**63, description="The app account; its credentials come from the broker"
    )
    event_fields: list[KeyValue] = Field(default_factory=list, description="The trigger event's field values")
    method: Literal["GET", "POST"] = "GET"
    url: str | None = Field(default=None, pattern=r"^https?://", max_length=2000)
    headers: list[KeyValue] = Field(default_factory=list)
    params: list[KeyValue] = Field(default_factory=list)
    items_path: str = Field(default="", max_length=200, description='Dotted path to the list; "" = the reply')
    dedupe: Literal["id", "timestamp"] = "id"
    id_path: str = Field(default="id", min_length=1, max_length=200)
    timestamp_path: str | None = Field(default=None, max_length=200)
    since_param: str | None = Field(default=None, max_length=100)
    since_format: Literal["iso8601", "unix", "unix_ms"] = "iso8601"
    interval_seconds: int = Field(default=300, ge=10, le=7 * 86400)
    max_seen: int = Field(default=1000, ge=10, le=100_000)
    max_items_per_poll: int = Field(default=100, ge=1, le=1000)

    @model_validator(mode="after")
    def _timestamp(self) -> PollingTrigger:
        if (self.url is None) == (self.app_id is None):
            raise ValueError("a polling trigger has either url or app_id (a catalogue app event)")
        if self.app_id is not None and not self.event:
            raise ValueError("a catalogue polling trigger names its event")
        if self.dedupe == "timestamp" and not self.timestamp_path:
            raise ValueError("dedupe by timestamp needs timestamp_path")
        if self.since_param and not self.timestamp_path:
            raise ValueError("since_param needs timestamp_path")
        return self


class Cursor(Strict):
    """What a konnect's poller remembers (the ``KZ_POLLS`` bucket, key ``konnect.<id>``)."""

    initialized: bool = False
    seen: list[str] = Field(default_factory=list, description="Recent item ids, oldest first")
    since: AwareDatetime | None = Field(default=None, description="Newest item timestamp seen")
    polled_at: AwareDatetime | None = None
    last_error: str | None = None
    source: str | None = Field(
        default=None, description="Fingerprint of what is polled: a cursor of another source starts afresh"
    )


def fingerprint(trigger: PollingTrigger) -> str:
    """What identifies the polled source (URL and params, or app, event, account and fields).

    Re-publishing a konnect with another event, account or URL must not compare the new source's
    items with ids seen in the old one: its first poll records what exists again.
    """
    parts = trigger.model_dump(
        mode="json", include={"url", "method", "params", "items_path", "app_id", "event", "account_id", "event_fields"}
    )
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def _path(value: Any, path: str) -> Any:
    """The value at dotted ``path`` of ``value`` ("" = itself); KeyError when absent."""
    return lookup(f"x.{path}" if path else "x", {"x": value})


_NUMERIC = re.compile(r"^\d{9,13}(\.\d+)?$")


def _timestamp(value: Any) -> datetime | None:
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            seconds = value / 1000 if value > 10**11 else value  # milliseconds beyond the year 5138
            return datetime.fromtimestamp(seconds, UTC)
        if isinstance(value, str) and _NUMERIC.match(value.strip()):  # Slack's ts "1700000000.000100"
            return _timestamp(float(value.strip()))
        if isinstance(value, str) and value.strip():
            parsed = date_parser.isoparse(value.strip())
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def item_key(trigger: PollingTrigger, item: Any) -> str | None:
    """The id of ``item`` (its ``id_path`` value as text), or None when it has none."""
    try:
        value = _path(item, trigger.id_path)
    except KeyError:
        return None
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


def since_value(trigger: PollingTrigger, cursor: Cursor) -> str | None:
    """The ``since_param`` value for the next request, or None."""
    if not trigger.since_param or cursor.since is None:
        return None
    if trigger.since_format == "unix":
        return str(int(cursor.since.timestamp()))
    if trigger.since_format == "unix_ms":
        return str(int(cursor.since.timestamp() * 1000))
    return cursor.since.isoformat().replace("+00:00", "Z")


def new_items(
    trigger: PollingTrigger, reply: Any, cursor: Cursor, now: datetime
) -> tuple[list[tuple[str, Any]], Cursor, list[str]]:
    """(new items as (key, item), the next cursor, warnings) for one poll's JSON ``reply``.

    Raises ValueError when the reply has no list at ``items_path``.
    """
    try:
        items = _path(reply, trigger.items_path)
    except KeyError:
        items = None
    if not isinstance(items, list):
        raise ValueError(f"The reply has no list at {trigger.items_path or 'its top level'!r}")
    return pick_new(trigger, items, cursor, now)


def pick_new(
    trigger: PollingTrigger, items: list[Any], cursor: Cursor, now: datetime
) -> tuple[list[tuple[str, Any]], Cursor, list[str]]:
    """:func:`new_items` for the list itself (a catalogue event's items, already read from its reply)."""
    warnings: list[str] = []
    keyed: list[tuple[str, Any, datetime | None]] = []
    for item in items:
        key = item_key(trigger, item)
        stamp = None
        if trigger.timestamp_path:
            try:
                stamp = _timestamp(_path(item, trigger.timestamp_path))
            except KeyError:
                stamp = None
        if trigger.dedupe == "timestamp" and stamp is None:
            warnings.append(f"an item without a readable {trigger.timestamp_path} was skipped")
            continue
        if key is None:
            if trigger.dedupe == "id":
                warnings.append(f"an item without {trigger.id_path} was skipped")
                continue
            key = stamp.isoformat() if stamp else ""
        keyed.append((key, item, stamp))
    if trigger.timestamp_path and all(s is not None for _, _, s in keyed):
        keyed.sort(key=lambda k: k[2] or now)  # oldest first
    if trigger.dedupe == "id":
        seen = set(cursor.seen)
        fresh: list[tuple[str, Any, datetime | None]] = []
        for entry in keyed:
            if entry[0] not in seen:
                seen.add(entry[0])
                fresh.append(entry)
    else:
        fresh = [e for e in keyed if cursor.since is None or (e[2] is not None and e[2] > cursor.since)]
    if not cursor.initialized:  # the first poll only records what exists
        recorded = list(dict.fromkeys(k for k, _, _ in keyed if k not in set(cursor.seen)))
        fresh = []
    else:
        fresh = fresh[: trigger.max_items_per_poll]  # the rest stay new for the next poll
        recorded = [k for k, _, _ in fresh]
    seen_next = [*cursor.seen, *recorded] if trigger.dedupe == "id" else []
    since_next = cursor.since
    if trigger.timestamp_path:
        stamps = [s for _, _, s in (fresh if cursor.initialized else keyed) if s is not None]
        candidate = max(stamps, default=None)
        if candidate is not None and (since_next is None or candidate > since_next):
            since_next = candidate
    cursor_next = Cursor(
        source=cursor.source,
        initialized=True,
        seen=seen_next[-trigger.max_seen :],
        since=since_next,
        polled_at=now,
        last_error=None,
    )
    return [(k, item) for k, item, _ in fresh], cursor_next, warnings


def newest_item(trigger: PollingTrigger, items: list[Any]) -> Any | None:
    """The newest item a poll would recognise (Test & Review's sample), or None.

    The latest ``timestamp_path`` when the items have one; otherwise the reply's first item (apps
    list newest first). Items the poller would skip (no id, or no timestamp under timestamp dedupe)
    are never chosen.
    """
    keyed, _, _ = pick_new(trigger, items, Cursor(initialized=True), datetime.now(UTC))
    if not keyed:
        return None
    if trigger.timestamp_path:
        stamped = []
        for _, item in keyed:
            try:
                stamp = _timestamp(_path(item, trigger.timestamp_path))
            except KeyError:
                stamp = None
            if stamp is not None:
                stamped.append((stamp, item))
        if stamped:
            return max(stamped, key=lambda pair: pair[0])[1]
    return keyed[0][1]


#: This kind's model in the :data:`~konnectz_contracts.triggers.Trigger` union, at place ``ORDER``.
MODEL = PollingTrigger
ORDER = 4
