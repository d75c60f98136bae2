"""The hand-written catalogue's app ids are unique and in their range, and the next free one is found by
``python -m konnectz_tools.app_ids`` (CONTRIBUTING.md), not by grep."""

from __future__ import annotations

import shutil
from pathlib import Path

from konnectz_tools import app_ids


def test_every_app_id_is_unique_and_in_its_range() -> None:
    assert app_ids.check() == []


def test_a_copied_add_on_gets_the_next_free_id_and_a_second_assign_keeps_it(tmp_path: Path) -> None:
    apps = tmp_path / "apps"
    shutil.copytree(app_ids.APPS, apps)
    taken = {app.id for app in app_ids.read_ids(apps)}
    expected = min(set(app_ids.IN_HOUSE) - taken)
    assert app_ids.next_free(apps=apps) == expected

    copy = apps / "shout.yaml"
    copy.write_text((apps / "hash.yaml").read_text(encoding="utf-8").replace("key: hash", "key: shout"))
    assert app_ids.check(apps) == ["shout.yaml: id 13 is taken by hash.yaml"]
    assert app_ids.assign(copy, apps=apps) == expected
    assert f"\nid: {expected}\n" in copy.read_text(encoding="utf-8")
    assert app_ids.assign(copy, apps=apps) == expected  # its own now: kept
    assert app_ids.check(apps) == []
    assert app_ids.next_free(apps=apps) == min(set(app_ids.IN_HOUSE) - taken - {expected})


def test_a_manifest_without_an_id_gets_one_before_its_key(tmp_path: Path) -> None:
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "a.yaml").write_text("id: 1\nkey: a\nsource:\n  kind: in-house\n")
    (apps / "b.yaml").write_text("# a comment\nkey: b\nsource:\n  kind: curated\n")
    assert app_ids.check(apps) == [
        "b.yaml: no id (python -m konnectz_tools.app_ids assign " + str(apps / "b.yaml") + ")"
    ]
    assert app_ids.assign(apps / "b.yaml", apps=apps) == app_ids.CURATED.start
    assert (
        apps / "b.yaml"
    ).read_text() == f"# a comment\nid: {app_ids.CURATED.start}\nkey: b\nsource:\n  kind: curated\n"
    (apps / "c.yaml").write_text("id: 5000\nkey: c\nsource:\n  kind: curated\n")
    assert app_ids.check(apps) == ["c.yaml: id 5000 is outside 101-999, the ids of a curated app"]
