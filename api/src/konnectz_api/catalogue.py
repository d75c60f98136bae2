"""The app catalogue as the api serves it: every manifest, loaded once and indexed in memory.

Manifests are files (``catalogue/apps/*.yaml`` and the generated bundle, see
:mod:`konnectz_runner.catalogue`); the api loads and validates them at startup and keeps an
index: the apps of each listing (all, triggers, actions, add-ons) sorted by name, with
lower-cased names for search. Searching is a substring match over about a thousand names in
memory (well under a millisecond): the query is matched literally, so ``%`` and ``_`` are plain
characters, never wildcards.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from konnectz_runner.catalogue import Catalogue, default_root, load_catalogue
from konnectz_runner.manifest import App

__all__ = ["SEARCH_MIN_CHARS", "AppIndex", "Listing", "auth_label", "get_index", "load_index"]

log = logging.getLogger(__name__)

SEARCH_MIN_CHARS = 2
Listing = Literal["all", "triggers", "actions", "add_ons"]


def auth_label(app: App) -> str | None:
    """The SPA's auth_type: ``OAuth2`` opens the authorisation popup, ``Token`` asks for fields."""
    if app.auth.type == "none":
        return None
    return "OAuth2" if app.auth.type == "oauth2" else "Token"


@dataclass(frozen=True)
class _Entry:
    app: App
    haystack: str  # lower-cased name and key


class AppIndex:
    """The listings of the catalogue, ready to search and page."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        visible = [a for a in catalogue.apps if a.status != "Disabled"]
        entries = [_Entry(a, f"{a.name.lower()}\n{a.key}") for a in visible]
        self.listings: dict[str, list[_Entry]] = {
            "all": entries,
            "triggers": [e for e in entries if e.app.can_trigger],
            "actions": [e for e in entries if e.app.can_act and not e.app.is_add_on],
            "add_ons": [e for e in entries if e.app.is_add_on],
        }

    def get(self, app_id: int) -> App | None:
        app = self.catalogue.get(app_id)
        return app if app is not None and app.status != "Disabled" else None

    def search(self, listing: Listing, query: str | None, *, limit: int, offset: int) -> tuple[list[App], int]:
        """One page of a listing; ``query`` filters by name when it has at least 2 characters."""
        entries = self.listings[listing]
        needle = (query or "").strip().lower()
        if len(needle) >= SEARCH_MIN_CHARS:
            entries = [e for e in entries if needle in e.haystack]
        return [e.app for e in entries[offset : offset + limit]], len(entries)


def load_index(root: Path | None = None) -> AppIndex:
    catalogue = load_catalogue(root)
    log.info("app catalogue loaded: %s", catalogue.stats())
    return AppIndex(catalogue)


@lru_cache
def _cached(root: str) -> AppIndex:
    return load_index(Path(root))


def get_index() -> AppIndex:
    """The process-wide index (loaded on first use; the app's lifespan loads it at startup)."""
    from konnectz_api.core.config import get_settings

    root = get_settings().catalogue_dir or default_root()
    return _cached(str(root))
