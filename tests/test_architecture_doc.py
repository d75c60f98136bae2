"""docs/architecture.md names files and modules that exist: a page that drifts from the tree fails.

Which spans are checked (everything else is prose and is not):

- only inline code (single backticks), outside fenced blocks, without spaces;
- a **path** is a span with a ``/`` or a span ending in a file suffix (``.py``, ``.ts``, ...).
  ``...`` stands for a package's source root (``api/...`` is ``api/src/konnectz_api``), ``<kind>``
  and ``*`` for any name (at least one must exist), a trailing ``/`` for a directory;
- a path starting with a top-level folder of the repository (``api/``, ``runner/``, ``web/``...) or a
  package (``konnectz_runner/...``) is *anchored*: it must exist as written;
- a path that is not anchored is *relative*: to the last anchored path before it on the same line
  (its folder or one of that folder's parents, up to the repository's root: ``apply.py`` after
  ``operator/.../render.py``, ``skaffold.yaml`` after ``docker/``), or,
  with none before it, to a package's source root (``services/deployer.py``); a bare file name may
  be anywhere below;
- a **module** (``konnectz_runner.apps.catalogue``, ``konnectz_contracts``) must be a module or package;
- paths the build writes (``web/dist/``, ``catalogue/build/``) are not checked: they are not in git;
- in the table of "The api's layers", every span is a module of ``konnectz_api`` (``canvas``):
  a module or package of ``api/src/konnectz_api`` or of one of its packages (``deployer`` of
  ``services``).
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"

FENCE = re.compile(r"^```.*?^```$", re.S | re.M)
SPAN = re.compile(r"`([^`\s]+)`")
SUFFIXES = (".py", ".ts", ".tsx", ".mjs", ".js", ".json", ".yaml", ".yml", ".md", ".toml", ".html")
PLACEHOLDER = re.compile(r"<[^<>/]+>")
DOTTED = re.compile(r"^konnectz_[a-z_]+(\.[a-z_][a-z0-9_]*)*$")
BUILT = ("web/dist/", "catalogue/build/")
UNSEARCHED = {"node_modules", "__pycache__", "dist", "build"}
IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")
TOP = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
# konnectz_api -> api/src/konnectz_api, ...
PACKAGES = {p.name: p for p in ROOT.glob("*/src/konnectz_*") if p.is_dir()}
SOURCE_ROOTS = [ROOT, *sorted(ROOT.glob("*/src")), *sorted(PACKAGES.values())]
API = PACKAGES["konnectz_api"]


def _is_path(span: str) -> bool:
    return "/" in span or span.endswith(SUFFIXES)


def _expand(span: str) -> str:
    """``api/...`` to ``api/src/konnectz_api``; ``<kind>`` to ``*``."""
    folder, dots, rest = span.partition("/...")
    package = PACKAGES.get(f"konnectz_{folder}")
    if dots and "/" not in folder and package is not None:
        span = str(package.relative_to(ROOT)) + rest
    return PLACEHOLDER.sub("*", span)


def _anchor(span: str) -> Path | None:
    """Where an anchored path starts (the repository, or a package's src/), else None (relative)."""
    first = span.split("/", 1)[0]
    if first in TOP and "/" in span:
        return ROOT
    if first in PACKAGES:
        return PACKAGES[first].parent
    return None


def _exists(base: Path, span: str, *, anywhere: bool = False) -> bool:
    """``span`` below ``base``; ``anywhere``: at any depth (but directly below the root, and never in
    installed or hidden trees: ``node_modules``, ``.venv``...)."""
    pattern = span.rstrip("/")
    found: list[Path] = []
    if anywhere and base != ROOT:
        for folder, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if d not in UNSEARCHED and not d.startswith(".")]
            found += [Path(folder, name) for name in fnmatch.filter(dirs + files, pattern)]
    else:
        found = list(base.glob(pattern))
    if span.endswith("/"):
        return any(p.is_dir() for p in found)
    return bool(found)


def _parents(path: Path) -> list[Path]:
    """The folder of an anchored path and its parents, up to the repository's root."""
    out = []
    folder = path if path.is_dir() else path.parent
    while folder != ROOT:
        out.append(folder)
        package = PACKAGES.get(f"konnectz_{folder.name}") if folder.parent == ROOT else None
        if package is not None:
            out.append(package)  # `contracts/` then `steps/`: contracts/src/konnectz_contracts/steps
        folder = folder.parent
    return [*out, ROOT]


def _module_exists(dotted: str) -> bool:
    first, *rest = dotted.split(".")
    package = PACKAGES.get(first)
    if package is None:
        return False
    target = package.joinpath(*rest)
    return target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()


def missing_names(page: str) -> list[str]:
    """Every span of ``page`` that names a path or a module that does not exist (the rule above)."""
    page = FENCE.sub("", page)
    missing = []
    layers = False
    for line in page.splitlines():
        if line.startswith("## "):
            layers = line == "## The api's layers"
        base: list[Path] | None = None  # the last anchored path's folders on this line
        for span in SPAN.findall(line):
            if (
                layers
                and line.startswith("|")
                and not DOTTED.match(span)
                and (IDENTIFIER.match(span) or span.endswith("/*"))
            ):
                name = span.removesuffix("/*")
                folders = [API, *(p for p in API.iterdir() if (p / "__init__.py").is_file())]
                if not any((f / f"{name}.py").is_file() or (f / name / "__init__.py").is_file() for f in folders):
                    missing.append(f"{span} (no module konnectz_api.{name} nor in one of its packages)")
                continue
            if DOTTED.match(span):
                if not _module_exists(span):
                    missing.append(f"{span} (no such module)")
                continue
            if not _is_path(span):
                continue
            expanded = _expand(span)
            if expanded.startswith(BUILT):
                continue
            anchor = _anchor(expanded)
            if anchor is not None:
                if not _exists(anchor, expanded):
                    missing.append(span)
                    continue
                base = _parents(next(anchor.glob(expanded.rstrip("/"))))
                continue
            bases = base if base is not None else SOURCE_ROOTS
            anywhere = "/" not in expanded
            if not any(_exists(b, expanded, anywhere=anywhere) for b in bases):
                missing.append(f"{span} (relative to {', '.join(str(b.relative_to(ROOT)) for b in bases[:3])}...)")
    return missing


def test_every_path_and_module_the_architecture_page_names_exists() -> None:
    assert missing_names(PAGE.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("line", "missing"),
    [
        ("| a | `runner/.../triggers/<kind>.py` |", ["runner/.../triggers/<kind>.py"]),
        ("| b | `api/src/konnectz_api/crud/users.py`, `ghost.py` |", ["ghost.py (relative to"]),
        ("| c | `operator/src/konnectz_operator/render.py`, `apply.py` |", []),
        ("| d | `konnectz_runner.apps.catalogue`, `konnectz_runner.nowhere` |", ["konnectz_runner.nowhere"]),
        ("| e | `services/deployer.py`, prose with `KONNECTZ_X`, `a b/c`, `Konnect` |", []),
        ("## The api's layers\n| models | `models`, `canvas`, `routes/*` |", ["canvas (no module"]),
        ("| f | `crds/`, `docker/`, `skaffold.yaml`, `web/dist/index.html`, `nowhere/` |", ["nowhere/ (relative"]),
    ],
)
def test_the_rule_catches_ghosts_and_leaves_prose_alone(line: str, missing: list[str]) -> None:
    found = missing_names(line)
    assert len(found) == len(missing) and all(f.startswith(m) for f, m in zip(found, missing, strict=True)), found
