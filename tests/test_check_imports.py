"""tools/check_imports.py: an import cycle or a hidden first-party import fails, a layered package passes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_imports", ROOT / "tools" / "check_imports.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_imports"] = module
    spec.loader.exec_module(module)
    return module


check_imports = _tool()


def _package(root: Path, files: dict[str, str]) -> Path:
    src = root / "pkg" / "src" / "konnectz_tiny"
    for name, text in {"__init__.py": "", **files}.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_layered_package_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _package(
        tmp_path,
        {
            "models.py": "X = 1\n",
            "crud/__init__.py": "",
            "crud/reads.py": "from konnectz_tiny.models import X\n",
            "routes.py": (
                "from typing import TYPE_CHECKING\n"
                "from konnectz_tiny.crud import reads\n"
                "if TYPE_CHECKING:\n    from konnectz_tiny import cli\n"
            ),
            "cli.py": (
                "from konnectz_tiny import routes\n"
                "def main():\n    import json\n    from konnectz_tiny import models  # import-ok: tested\n"
            ),
        },
    )
    assert check_imports.main(["--root", str(root), "--package", "konnectz_tiny"]) == 0
    assert "no import cycle" in capsys.readouterr().out


def test_a_cycle_fails_and_is_printed_as_a_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _package(
        tmp_path,
        {
            "a.py": "from konnectz_tiny.b import B\nA = 1\n",
            "b.py": "import konnectz_tiny.c\nB = 2\n",
            "c.py": "from . import a\n",
        },
    )
    assert check_imports.main(["--root", str(root)]) == 1
    out = capsys.readouterr().out
    cycle = "konnectz_tiny.a -> konnectz_tiny.b -> konnectz_tiny.c -> konnectz_tiny.a"
    assert f"konnectz_tiny: import cycle: {cycle}" in out


def test_a_function_local_import_fails_unless_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _package(
        tmp_path,
        {
            "a.py": "def f():\n    from konnectz_tiny import b\n    return b\n",
            "b.py": "def g():\n    from konnectz_tiny.a import f  # import-ok: an optional path\n",
        },
    )
    assert check_imports.main(["--root", str(root), "--package", "konnectz_tiny"]) == 1
    out = capsys.readouterr().out
    assert "a.py:2: function-local import of konnectz_tiny.b" in out
    assert "b.py" not in out


def test_the_package_filter(tmp_path: Path) -> None:
    root = _package(tmp_path, {"a.py": "from konnectz_tiny import b\n", "b.py": "from konnectz_tiny import a\n"})
    assert check_imports.main(["--root", str(root), "--package", "konnectz_tiny"]) == 1
    assert check_imports.main(["--root", str(root), "--package", "konnectz_other"]) == 1  # no such package
    assert check_imports.check(root, ["konnectz_tiny"]) == [
        "konnectz_tiny: import cycle: konnectz_tiny.a -> konnectz_tiny.b -> konnectz_tiny.a"
    ]


def test_a_package_importing_upwards_fails(tmp_path: Path) -> None:
    for package, text in (
        ("konnectz_contracts", "from konnectz_runner import engine\n"),
        ("konnectz_runner", "X = 1\n"),
    ):
        src = tmp_path / package.removeprefix("konnectz_") / "src" / package
        src.mkdir(parents=True)
        (src / "__init__.py").write_text("")
        (src / "spec.py").write_text(text)
    errors = check_imports.check(tmp_path)
    assert errors == [
        "contracts/src/konnectz_contracts/spec.py:1: konnectz_contracts imports konnectz_runner "
        "(it may import no other first-party package)"
    ]
    (tmp_path / "contracts/src/konnectz_contracts/spec.py").write_text(
        "from konnectz_runner import engine  # import-ok: a test of the mark\n"
    )
    assert check_imports.check(tmp_path) == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


_ROOMS = {
    "runner/src/konnectz_runner/__init__.py": "",
    "runner/src/konnectz_runner/telemetry.py": "X = 1\n",
    "runner/src/konnectz_runner/cli.py": "from konnectz_runner.work import run\n",
    "runner/src/konnectz_runner/apps/__init__.py": (
        "from konnectz_runner.apps import outbound\nfrom konnectz_runner.apps.guard import check\n"
        '__all__ = ["check", "outbound"]\n'
    ),
    "runner/src/konnectz_runner/apps/guard.py": "def check(): ...\n",
    "runner/src/konnectz_runner/apps/outbound.py": "from konnectz_runner.apps.guard import check\n",
    "runner/src/konnectz_runner/apps/secret.py": "Y = 2\n",
    "runner/src/konnectz_runner/engine/__init__.py": "__all__ = []\n",
    "runner/src/konnectz_runner/work/__init__.py": 'from konnectz_runner.work.worker import run\n__all__ = ["run"]\n',
    "runner/src/konnectz_runner/work/worker.py": (
        "from konnectz_runner import telemetry\nfrom konnectz_runner.apps import check, outbound\ndef run(): ...\n"
    ),
    "api/src/konnectz_api/__init__.py": "",
    "api/src/konnectz_api/routes.py": "from konnectz_runner.apps import check\nfrom konnectz_runner import telemetry\n",
}


def test_rooms_are_entered_through_their_faces(tmp_path: Path) -> None:
    root = _tree(tmp_path, _ROOMS)
    assert check_imports.check(root, ["konnectz_runner", "konnectz_api"]) == []


@pytest.mark.parametrize(
    ("path", "text", "error"),
    [
        (  # another room's own module, not its face
            "runner/src/konnectz_runner/work/worker.py",
            "from konnectz_runner.apps.secret import Y\n",
            "runner/src/konnectz_runner/work/worker.py:1: konnectz_runner.apps.secret is private to the room "
            "konnectz_runner.apps: import its face",
        ),
        (  # a room below imports one above
            "runner/src/konnectz_runner/apps/secret.py",
            "from konnectz_runner.work import run\n",
            "runner/src/konnectz_runner/apps/secret.py:1: the room konnectz_runner.apps imports the room "
            "konnectz_runner.work (it may import no other room)",
        ),
        (  # a room imports a top module that is not a base one
            "runner/src/konnectz_runner/apps/secret.py",
            "from konnectz_runner import cli\n",
            "runner/src/konnectz_runner/apps/secret.py:1: the room konnectz_runner.apps imports konnectz_runner.cli "
            "(a top module, not a base one)",
        ),
        (  # the api imports a room it may not
            "api/src/konnectz_api/routes.py",
            "from konnectz_runner.work import run\n",
            "api/src/konnectz_api/routes.py:1: konnectz_api imports the room konnectz_runner.work "
            "(it may import apps, bus, engine)",
        ),
        (  # the api imports a room's own module
            "api/src/konnectz_api/routes.py",
            "from konnectz_runner.apps.guard import check\n",
            "api/src/konnectz_api/routes.py:1: konnectz_runner.apps.guard is private to the room konnectz_runner.apps: "
            "import its face",
        ),
        (  # the api imports a top module of the runner instead of its facade
            "api/src/konnectz_api/routes.py",
            "from konnectz_runner.telemetry import X\n",
            "api/src/konnectz_api/routes.py:1: konnectz_api imports konnectz_runner.telemetry "
            "(only the facade konnectz_runner and its rooms' faces)",
        ),
    ],
)
def test_a_room_entered_by_a_side_door_fails(tmp_path: Path, path: str, text: str, error: str) -> None:
    root = _tree(tmp_path, {**_ROOMS, path: text})
    assert check_imports.check(root, ["konnectz_runner", "konnectz_api"]) == [error]
