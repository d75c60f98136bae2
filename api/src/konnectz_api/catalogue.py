"""The app catalogue as the api serves it: every manifest, loaded once and indexed in memory.

Manifests are files (``catalogue/apps/*.yaml`` and the generated bundle, see
:mod:`konnectz_runner.apps.catalogue`); the api loads and validates them at startup and keeps an
index: the apps of each listing (all, triggers, actions, add-ons) sorted by name, with
lower-cased names for search. Searching is a substring match over about a thousand names in
memory (well under a millisecond): the query is matched literally, so ``%`` and ``_`` are plain
characters, never wildcards.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from cachetools import LRUCache

from konnectz_api.core.config import get_settings
from konnectz_contracts.manifest import App
from konnectz_runner.apps import GENERATED_BUNDLE, BundleIndex, default_root, load_catalogue

__all__ = ["SEARCH_MIN_CHARS", "AppIndex", "AppSummary", "Listing", "auth_label", "get_index", "load_index"]

log = logging.getLogger(__name__)

SEARCH_MIN_CHARS = 2
Listing = Literal["all", "triggers", "actions", "add_ons"]


def auth_label(auth_type: str) -> str | None:
    """The SPA's auth_type: ``OAuth2`` opens the authorisation popup, ``Token`` asks for fields."""
    if auth_type == "none":
        return None
    return "OAuth2" if auth_type == "oauth2" else "Token"


@dataclass(frozen=True)
class AppSummary:
    """What a listing shows of an app."""

    id: int
    key: str
    name: str
    logo_url: str | None
    status: str
    app_type: str
    auth_type: str | None
    categories: list[str]
    can_trigger: bool
    can_act: bool
    is_add_on: bool
    haystack: str  # lower-cased name and key
    curated: bool = False  # a hand-written manifest (not generated from an OpenAPI document)

    @classmethod
    def of(cls, data: dict[str, Any], *, curated: bool = False) -> AppSummary:
        kinds = {e.get("kind") for e in data.get("events", [])}
        app_type = data.get("app_type", "api")
        return cls(
            id=int(data["id"]),
            key=data["key"],
            name=data["name"],
            logo_url=data.get("logo_url"),
            status=data.get("status", "Active"),
            app_type=app_type,
            auth_type=auth_label((data.get("auth") or {}).get("type", "none")),
            categories=list(data.get("categories") or []),
            can_trigger="trigger" in kinds,
            can_act=bool(kinds & {"action", "search"}),
            is_add_on=app_type == "ADD_ON",
            haystack=f"{data['name'].lower()}\n{data['key']}",
            curated=curated,
        )


class AppIndex:
    """The listings of the catalogue, ready to search and page.

    Curated manifests are validated at load. The generated bundle (validated when it was
    generated, and by its tests) is not held in memory: a :class:`BundleIndex` keeps each app's
    summary and byte range (cached beside the bundle), and an app is read and validated on first
    use (the last ``cache_size`` stay parsed).
    """

    def __init__(
        self,
        apps: list[App],
        raw: list[dict[str, Any]] | None = None,
        *,
        bundle: BundleIndex | None = None,
        cache_size: int = 128,
    ) -> None:
        self._apps: dict[int, App] = {a.id: a for a in apps}
        self._raw: dict[int, dict[str, Any]] = {int(d["id"]): d for d in raw or []}
        self._bundle = bundle
        # Sync routes read it from FastAPI's thread pool: an LRUCache is not thread-safe, so a lock.
        self._cache: LRUCache[int, App] = LRUCache(maxsize=cache_size)
        self._cache_lock = threading.Lock()
        summaries = [AppSummary.of(a.model_dump(mode="json", include=_SUMMARY_FIELDS), curated=True) for a in apps]
        summaries += [AppSummary.of(d, curated=True) for d in raw or []]
        summaries += [AppSummary.of(d) for d in (bundle.summaries if bundle is not None else [])]
        seen: set[int] = set()
        for summary in summaries:
            if summary.id in seen:
                raise ValueError(f"app id {summary.id} ({summary.key}) is used twice")
            seen.add(summary.id)
        entries = sorted((e for e in summaries if e.status != "Disabled"), key=lambda e: (e.name.lower(), e.id))
        self.listings: dict[str, list[AppSummary]] = {
            "all": entries,
            # Built-in triggers (Webhook, Scheduler, Form) lead the trigger picker, then apps by name.
            "triggers": sorted((e for e in entries if e.can_trigger), key=lambda e: e.app_type == "api"),
            "actions": [e for e in entries if e.can_act and not e.is_add_on],
            "add_ons": [e for e in entries if e.is_add_on],
        }
        self._visible = {e.id: e for e in entries}
        self.stats: dict[str, Any] = {}
        self.root: Path | None = None  # the catalogue directory (bundled icons), when loaded from one

    def summary(self, app_id: int) -> AppSummary | None:
        """What a listing shows of a visible app, without reading its manifest."""
        return self._visible.get(app_id)

    def get(self, app_id: int) -> App | None:
        if app_id not in self._visible:
            return None
        app = self._apps.get(app_id)
        if app is None and app_id in self._raw:
            app = App.model_validate(self._raw.pop(app_id))
            self._apps[app_id] = app
        if app is None and self._bundle is not None:
            with self._cache_lock:
                app = self._cache.get(app_id)  # a hit makes it the most recently used
            if app is None:
                app = self._bundle.app(app_id)
                if app is None:
                    return None
                with self._cache_lock:
                    self._cache[app_id] = app  # evicts the least recently used past cache_size
        return app

    def search(self, listing: Listing, query: str | None, *, limit: int, offset: int) -> tuple[list[AppSummary], int]:
        """One page of a listing; ``query`` filters by name and key when it has at least 2 characters.

        Matches are ranked: the app named exactly so first, then curated apps before generated
        ones, then names that start with the query, then by name (``github``: the curated GitHub,
        then the generated GitHub Enterprise Server documents).
        """
        entries = self.listings[listing]
        needle = (query or "").strip().lower()
        if len(needle) >= SEARCH_MIN_CHARS:
            entries = sorted(
                (e for e in entries if needle in e.haystack),
                key=lambda e: (
                    e.name.lower() != needle,
                    not e.curated,
                    not e.name.lower().startswith(needle),
                    e.name.lower(),
                    e.id,
                ),
            )
        return entries[offset : offset + limit], len(entries)


_SUMMARY_FIELDS = {"id", "key", "name", "logo_url", "status", "app_type", "auth", "categories", "events"}


def load_index(root: Path | None = None, *, extra_dirs: list[Path] | None = None) -> AppIndex:
    started = time.perf_counter()
    root = root or default_root()
    curated = load_catalogue(root, extra_dirs=extra_dirs or [], include_generated=False)
    bundle = root / GENERATED_BUNDLE
    generated = BundleIndex.open(bundle) if bundle.is_file() else None
    index = AppIndex(curated.apps, bundle=generated)
    index.root = root
    index.stats = {
        "apps": len(index.listings["all"]),
        "apps_with_triggers": len(index.listings["triggers"]),
        "events": curated.event_count + (generated.events if generated is not None else 0),
        "size_bytes": curated.size_bytes + (bundle.stat().st_size if bundle.is_file() else 0),
        "load_seconds": round(time.perf_counter() - started, 3),
    }
    log.info("app catalogue loaded: %s", index.stats)
    return index


@lru_cache
def _cached(root: str) -> AppIndex:
    return load_index(Path(root))


def get_index() -> AppIndex:
    """The process-wide index (loaded on first use; the app's lifespan loads it at startup)."""
    root = get_settings().catalogue_dir or default_root()
    return _cached(str(root))
