"""The api reads top-down (docs/architecture.md, "The api's layers"): a module imports only modules of
its own layer or of the layers below it, found by tools/check_imports.py's parser."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Lowest first; a module belongs to the layer of the longest dotted prefix that names it
# (``compile.plan`` is below the models, the rest of ``compile`` beside ``crud``).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "bottom",
        ("core", "db", "bus", "errors", "limits", "pressure", "observability", "migrate"),
    ),
    (
        "models",
        (
            "models",
            "schemas",
            "compile.plan",
            "catalogue",
            "compile.live_trigger",
            "step_secrets",
            "compile.trigger_filter",
            "task_status",
            "jsonb",
            "params",
            "replies",
            "app_icons",
        ),
    ),
    ("migrations", ("migrations",)),  # Alembic's scripts: they may use the models' pure helpers
    ("crud / compile", ("crud", "compile")),
    ("services", ("services",)),
    ("routes", ("routes", "deps")),
    ("entry", ("main", "cli", "__main__", "fastreads", "responses")),
]


def _tool():
    spec = importlib.util.spec_from_file_location("check_imports_for_layers", ROOT / "tools" / "check_imports.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _layer(module: str) -> int:
    rest = module.removeprefix("konnectz_api").lstrip(".")
    if not rest:
        return -1  # the package itself
    parts = rest.split(".")
    for length in range(len(parts), 0, -1):
        prefix = ".".join(parts[:length])
        for rank, (_name, members) in enumerate(LAYERS):
            if prefix in members:
                return rank
    raise AssertionError(f"{module} is in no layer of this test (add it to LAYERS)")


def test_every_module_the_layers_name_exists() -> None:
    """LAYERS names no module that is gone (docs/architecture.md's table is checked by test_architecture_doc)."""
    package = ROOT / "api" / "src" / "konnectz_api"
    ghosts = [
        name
        for _layer_name, members in LAYERS
        for name in members
        if not (package / f"{name.replace('.', '/')}.py").is_file() and not (package / name).is_dir()
    ]
    assert ghosts == []


def test_every_api_module_imports_only_its_layer_or_lower() -> None:
    tool = _tool()
    modules = tool.parse_package(ROOT / "api" / "src" / "konnectz_api")
    upward = [
        f"{name} ({LAYERS[_layer(name)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for name, module in sorted(modules.items())
        if _layer(name) >= 0
        for target in module.imports
        if _layer(target) > _layer(name)
    ]
    assert upward == []
