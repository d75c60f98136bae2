"""The ids of the catalogue's hand-written apps (``catalogue/apps/<key>.yaml``): which are taken, the next
free one, and a check that they are unique and in their range.

Ranges: in-house apps (add-ons and triggers, ``source.kind: in-house``) take 1 to 99, curated apps
101 to 999; the generated long tail takes its ids from the document's path (>= 1,000,000, see
docs/catalogue.md). An id is stored in every canvas that uses the app, so it never changes.

Usage (from the repository's root)::

    .venv/bin/python -m konnectz_tools.app_ids next              # the next free in-house id
    .venv/bin/python -m konnectz_tools.app_ids next --curated    # the next free curated id
    .venv/bin/python -m konnectz_tools.app_ids assign catalogue/apps/<key>.yaml
    .venv/bin/python -m konnectz_tools.app_ids check

``assign`` keeps the manifest's id when no other manifest has it (and it is in its range), else writes
the next free id of its range into its ``id:`` line (a copy of ``hash.yaml`` gets a new one);
``check`` exits 1 on a missing or duplicate id or one outside its range (``make test`` runs it:
``tests/test_app_ids.py``).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["CURATED", "IN_HOUSE", "AppId", "assign", "check", "next_free", "read_ids"]

ROOT = Path(__file__).resolve().parents[3]
APPS = ROOT / "catalogue" / "apps"
IN_HOUSE = range(1, 100)
CURATED = range(101, 1000)
ID_LINE = re.compile(r"^id:[ \t]*(?P<value>\S*)[ \t]*$", re.M)


@dataclass(frozen=True)
class AppId:
    path: Path
    id: int | None
    in_house: bool


def _range(in_house: bool) -> range:
    return IN_HOUSE if in_house else CURATED


def read_ids(apps: Path = APPS) -> list[AppId]:
    """Every manifest of ``apps`` with its id (None when it has none yet) and whether it is in-house."""
    found = []
    for path in sorted(apps.glob("*.yaml")):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) or {}
        value = data.get("id")
        in_house = (data.get("source") or {}).get("kind") == "in-house"
        found.append(AppId(path, value if isinstance(value, int) else None, in_house))
    return found


def next_free(*, in_house: bool = True, apps: Path = APPS, besides: Path | None = None) -> int:
    """The lowest id of the range that no manifest (but ``besides``) has."""
    taken = {app.id for app in read_ids(apps) if besides is None or app.path.resolve() != besides.resolve()}
    free = next((n for n in _range(in_house) if n not in taken), None)
    if free is None:
        raise SystemExit(f"no free id left in {_range(in_house)}")
    return free


def assign(path: Path, *, apps: Path = APPS) -> int:
    """The manifest's id: its own when it is in its range and no other manifest has it, else the next
    free one of its range (written into its ``id:`` line, or a line added before ``key:``)."""
    text = path.read_text(encoding="utf-8")
    data = yaml.load(text, Loader=yaml.CSafeLoader) or {}
    in_house = (data.get("source") or {}).get("kind") == "in-house"
    own = data.get("id")
    others = {app.id for app in read_ids(apps) if app.path.resolve() != path.resolve()}
    if isinstance(own, int) and own in _range(in_house) and own not in others:
        return own
    value = next_free(in_house=in_house, apps=apps, besides=path)
    if ID_LINE.search(text):
        text = ID_LINE.sub(f"id: {value}", text, count=1)
    elif re.search(r"^key:", text, re.M):
        text = re.sub(r"^key:", f"id: {value}\nkey:", text, count=1, flags=re.M)
    else:
        text = f"id: {value}\n{text}"
    path.write_text(text, encoding="utf-8")
    return value


def check(apps: Path = APPS) -> list[str]:
    """What is wrong with the ids of ``apps``: missing, duplicated, or outside the app's range."""
    errors = []
    seen: dict[int, Path] = {}
    for app in read_ids(apps):
        name = app.path.name
        if app.id is None:
            errors.append(f"{name}: no id (python -m konnectz_tools.app_ids assign {app.path})")
            continue
        wanted = _range(app.in_house)
        if app.id not in wanted:
            what = "an in-house app" if app.in_house else "a curated app"
            errors.append(f"{name}: id {app.id} is outside {wanted.start}-{wanted.stop - 1}, the ids of {what}")
        if app.id in seen:
            errors.append(f"{name}: id {app.id} is taken by {seen[app.id].name}")
        seen.setdefault(app.id, app.path)
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    following = commands.add_parser("next", help="print the next free id")
    following.add_argument("--curated", action="store_true", help="of a curated app (default: in-house)")
    assigning = commands.add_parser("assign", help="write the next free id into a manifest without one")
    assigning.add_argument("path", type=Path)
    commands.add_parser("check", help="exit 1 on a duplicate id or one outside its range")
    args = parser.parse_args(argv)
    if args.command == "next":
        print(next_free(in_house=not args.curated))
    elif args.command == "assign":
        print(assign(args.path))
    else:
        errors = check()
        for error in errors:
            print(error)
        if errors:
            return 1
        print(f"app ids: {len(read_ids())} manifests, every id unique and in its range")
    return 0


if __name__ == "__main__":
    sys.exit(main())
