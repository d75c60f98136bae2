import ast
import inspect
from pathlib import Path
from types import ModuleType

import pytest

import konnectz_contracts.events
import konnectz_contracts.spec
import konnectz_runner
from konnectz_runner import apps, bus, clock, engine, ingress, work
from konnectz_runner.config import Settings

REPO = Path(__file__).resolve().parents[2]
#: The runner's facade and the faces of its rooms (each room's __init__.py).
FACES: list[ModuleType] = [konnectz_runner, apps, bus, clock, engine, ingress, work]
#: The faces another package may import (tools/check_imports.py ROOM_USERS: never ingress, work, clock).
OPEN_TO_OTHERS = {
    "konnectz_runner",
    "konnectz_runner.apps",
    "konnectz_runner.bus",
    "konnectz_runner.engine",
}


@pytest.mark.parametrize("face", FACES, ids=lambda face: face.__name__)
def test_all_lists_exactly_the_public_names(face: ModuleType) -> None:
    exported_modules = {name for name in face.__all__ if inspect.ismodule(getattr(face, name))}
    public = {name for name, value in vars(face).items() if not name.startswith("_") and not inspect.ismodule(value)}
    assert set(face.__all__) - exported_modules == public
    assert len(face.__all__) == len(set(face.__all__))
    # A module a face names is one of its room's own (``from konnectz_runner.apps import outbound``).
    for name in exported_modules:
        assert getattr(face, name).__name__.startswith(face.__name__ + "."), name


@pytest.mark.parametrize("face", FACES, ids=lambda face: face.__name__)
def test_every_exported_name_resolves(face: ModuleType) -> None:
    for name in face.__all__:
        assert getattr(face, name) is not None, name


def test_the_facade_is_the_top_only() -> None:
    """The facade hands on only what stands at the top of the package: importing it loads no room."""
    rooms = {face.__name__.rsplit(".", 1)[1] for face in FACES[1:]}
    tree = ast.parse(Path(konnectz_runner.__file__).read_text())
    sources = [node.module or "" for node in tree.body if isinstance(node, ast.ImportFrom)]
    assert sources, "the facade imports nothing"
    for module in sources:
        package, _, top = module.partition(".")
        assert package == "konnectz_runner" and "." not in top and top not in rooms, module


def test_contract_names_are_exported() -> None:
    # The contracts live in konnectz_contracts (the runner does not re-export them) ...
    for module, names in (
        (konnectz_contracts.spec, ("FlowSpec", "ApiCallStep", "WebhookTrigger", "KeyValue", "Trigger", "Step")),
        (
            konnectz_contracts.events,
            ("RunRequest", "TaskEvent", "StepResult", "STREAM_RUNS", "STREAM_EVENTS", "KV_KONNECTS",
             "run_subject", "event_subject"),
        ),
    ):  # fmt: skip
        for name in names:
            assert name in module.__all__, name
            assert name not in konnectz_runner.__all__, name
        for face in FACES:
            assert name not in face.__all__, (face.__name__, name)
    # ... and the runner's faces export what runs them.
    for face, names in (
        (bus, ("ensure_streams", "publish_run", "publish_event")),
        (engine, ("execute", "run_step")),
        (apps, ("NetGuard",)),
    ):
        for name in names:
            assert name in face.__all__, (face.__name__, name)
    assert Settings.__module__ == "konnectz_runner.config"
    assert konnectz_contracts.events.STREAM_RUNS == "KZ_RUNS"
    assert konnectz_contracts.events.STREAM_EVENTS == "KZ_EVENTS"
    assert konnectz_contracts.events.KV_KONNECTS == "KZ_KONNECTS"


def _runner_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("konnectz_runner.")
            and node.module not in OPEN_TO_OTHERS
        ):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Import):
            found += [
                f"{path.relative_to(REPO)}:{node.lineno}: import {alias.name}"
                for alias in node.names
                if alias.name.startswith("konnectz_runner.")
            ]
    return found


def test_other_packages_import_the_runner_only_from_its_facade_and_open_faces() -> None:
    """The api, the operator and the dev stack use ``from konnectz_runner import ...`` and ``from
    konnectz_runner.<engine|apps|bus> import ...`` only: no private module, no ingress, work or clock."""
    offending = [
        line
        for src in ("api/src", "operator/src", "devstack/src")
        for path in sorted((REPO / src).rglob("*.py"))
        for line in _runner_imports(path)
    ]
    assert not offending, "\n".join(offending)
    # And the faces serve every name they import from them.
    faces = {face.__name__: face for face in FACES}
    for src in ("api/src", "operator/src", "devstack/src"):
        for path in (REPO / src).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module in OPEN_TO_OTHERS:
                    for alias in node.names:
                        assert alias.name in faces[node.module].__all__, f"{path}: {node.module}.{alias.name}"


def test_the_operator_does_not_import_the_runner() -> None:
    offending = [
        f"{path.relative_to(REPO)}"
        for path in sorted((REPO / "operator/src").rglob("*.py"))
        if "konnectz_runner" in {
            (node.module or "").split(".")[0]
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom)
        }
    ]  # fmt: skip
    assert not offending, offending
