"""The runner's rooms: each a folder whose __init__.py is its face, entered only through it.

tools/check_imports.py holds the rules (ROOMS, ROOM_USERS; `make lint` runs it); this test runs
them on the tree, so a room entered by a side door also fails the runner's tests.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import konnectz_runner
from konnectz_runner import apps, bus, clock, engine, ingress, work

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_imports", REPO / "tools" / "check_imports.py")
assert _spec is not None and _spec.loader is not None
check_imports = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("check_imports", check_imports)
_spec.loader.exec_module(check_imports)


def test_every_room_is_a_folder_with_a_face_and_every_module_has_a_place() -> None:
    package = Path(konnectz_runner.__file__).parent
    rooms = check_imports.ROOMS["konnectz_runner"]
    assert {face.__name__.rsplit(".", 1)[1] for face in (apps, bus, clock, engine, ingress, work)} == set(rooms.allowed)
    for room in rooms.allowed:
        assert (package / room / "__init__.py").is_file(), room
    top = {path.stem for path in package.glob("*.py")} - {"__init__", "__main__"}
    assert top == {"cli", "config", "outage", "processes", "tasks", "telemetry"}
    assert rooms.base < top


def test_no_room_is_entered_by_a_side_door() -> None:
    errors = check_imports.check(REPO, ["konnectz_runner", "konnectz_api", "konnectz_tools"])
    assert errors == []


def test_the_api_uses_only_the_faces_of_engine_apps_and_bus() -> None:
    assert check_imports.ROOM_USERS["konnectz_api"] == {"konnectz_runner": frozenset({"apps", "bus", "engine"})}
    named = {
        target
        for module in check_imports.parse_package(REPO / "api" / "src" / "konnectz_api").values()
        for target in module.named
        if target.startswith("konnectz_runner")
    }
    assert named <= {"konnectz_runner", "konnectz_runner.apps", "konnectz_runner.bus", "konnectz_runner.engine"}
    assert {"konnectz_runner.apps", "konnectz_runner.bus", "konnectz_runner.engine"} <= named
