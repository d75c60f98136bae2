"""Import-graph check for the first-party packages (konnectz_*): no cycles, no hidden imports.

Plain Python over ``ast``. For every module of a package (found under ``*/src/konnectz_*``) it
collects the first-party modules imported at module level, skipping imports that only run for the
type checker (``if TYPE_CHECKING:``), and fails on:

* an import cycle between modules of the same package (printed as a path ``a -> b -> a``);
* a function-local import of a first-party module (usually a cycle being hidden), unless its line
  carries ``# import-ok: <reason>``;
* a broken room rule (:data:`ROOMS`): a package's room is a folder whose ``__init__.py`` is its *face*
  (its ``__all__`` names what others may import). A module outside a room imports only its face (or
  a submodule the face names in ``__all__``), never its private modules; a room imports only the
  rooms it is allowed to, and of the modules at the package's top only the *base* ones; another
  package imports only the faces :data:`ROOM_USERS` allows it (and the package's own facade).

Usage: ``python tools/check_imports.py [--root DIR] [--package NAME ...]``; exit 1 on any error.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

OK_MARK = "# import-ok:"
# Which first-party packages each package may import (top-down: the contracts import none, the
# runner and the operator only the contracts, the api the contracts and the runner's facade). A
# package not named here may import any. An `# import-ok:` line is exempt (the devstack's test
# helpers load the api's captcha and the contracts only when a test asks for them).
ALLOWED: dict[str, frozenset[str]] = {
    "konnectz_contracts": frozenset(),
    "konnectz_runner": frozenset({"konnectz_contracts"}),
    "konnectz_operator": frozenset({"konnectz_contracts"}),
    "konnectz_api": frozenset({"konnectz_contracts", "konnectz_runner"}),
    # the NATS users and permissions its nats-server runs with (konnectz_contracts.nats_auth)
    "konnectz_devstack": frozenset({"konnectz_contracts"}),
    "konnectz_tools": frozenset({"konnectz_contracts", "konnectz_runner"}),
}


@dataclass(frozen=True)
class Rooms:
    """A package's rooms: room -> the rooms it may import; ``base``: the top modules rooms may import."""

    allowed: dict[str, frozenset[str]]
    base: frozenset[str]


# The runner's rooms (issue 36), from the bottom up: apps (the catalogue, app requests, outbound HTTP,
# budgets); engine (a flow run, the journal, steps) and bus (NATS) above apps; work (the run worker)
# and clock (scheduler, poller, election) above those; ingress (the HTTP app, which starts work and
# clock) at the top. The top modules (cli, processes, __main__) may import any face; rooms may import
# the base ones (config, telemetry, outage, tasks).
ROOMS: dict[str, Rooms] = {
    "konnectz_runner": Rooms(
        allowed={
            "apps": frozenset(),
            "engine": frozenset({"apps"}),
            "bus": frozenset({"apps"}),
            "work": frozenset({"apps", "bus", "engine"}),
            "clock": frozenset({"apps", "bus", "engine"}),
            "ingress": frozenset({"apps", "bus", "clock", "engine", "work"}),
        },
        base=frozenset({"config", "outage", "tasks", "telemetry"}),
    ),
}
# Which rooms of another package a package may import, through their faces (and the package's
# facade, its __init__.py, for the modules at its top): the api never imports the runner's ingress,
# work or clock; the tools read the catalogue.
ROOM_USERS: dict[str, dict[str, frozenset[str]]] = {
    "konnectz_api": {"konnectz_runner": frozenset({"apps", "bus", "engine"})},
    "konnectz_tools": {"konnectz_runner": frozenset({"apps"})},
}


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    imports: dict[str, int] = field(default_factory=dict)  # imported module -> first line
    local_imports: list[tuple[int, str]] = field(default_factory=list)  # (line, imported module)
    packages: dict[str, int] = field(default_factory=dict)  # other first-party package -> first line
    # every first-party module an import names (module level or not; also of other packages) -> line
    named: dict[str, int] = field(default_factory=dict)


def find_packages(root: Path) -> dict[str, Path]:
    """Every top-level ``konnectz_*`` package under ``<root>/*/src/``."""
    found: dict[str, Path] = {}
    for init in sorted(root.glob("*/src/konnectz_*/__init__.py")):
        found[init.parent.name] = init.parent
    return found


def module_name(package_dir: Path, path: Path) -> tuple[str, bool]:
    rel = path.relative_to(package_dir.parent).with_suffix("")
    parts = list(rel.parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _targets(module: Module, node: ast.Import | ast.ImportFrom, known: set[str]) -> Iterator[str]:
    """The first-party modules an import statement loads (``from pkg import sub`` loads ``pkg.sub``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    base = _resolve(module, node)
    subs = [f"{base}.{alias.name}" for alias in node.names]
    if not all(sub in known for sub in subs):  # a name defined in base itself, not only its submodules
        yield base
    yield from (sub for sub in subs if sub in known)


def _walk(node: ast.AST, *, in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for orelse in child.orelse:  # the else branch runs
                yield from _walk_one(orelse, in_function=in_function)
            continue
        yield from _walk_one(child, in_function=in_function)


def _walk_one(node: ast.AST, *, in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node, in_function
        return
    inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        for orelse in node.orelse:
            yield from _walk_one(orelse, in_function=inner)
        return
    yield from _walk(node, in_function=inner)


def parse_package(package_dir: Path) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted(package_dir.rglob("*.py")):
        name, is_package = module_name(package_dir, path)
        modules[name] = Module(name, path, is_package)
    known = set(modules)
    for module in modules.values():
        source = module.path.read_text(encoding="utf-8")
        lines = source.splitlines()
        tree = ast.parse(source, filename=str(module.path))
        for node, in_function in _walk(tree, in_function=False):
            for target in _targets(module, node, known):
                top = target.split(".")[0]
                if not top.startswith("konnectz_"):
                    continue
                line_text = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
                if top != module.name.split(".")[0] and OK_MARK not in line_text:
                    module.packages.setdefault(top, node.lineno)
                module.named.setdefault(target, node.lineno)
                if in_function:
                    line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
                    if OK_MARK not in line:
                        module.local_imports.append((node.lineno, target))
                    continue
                if target in known and target != module.name:
                    module.imports.setdefault(target, node.lineno)
    return modules


def _edges(modules: dict[str, Module]) -> dict[str, list[str]]:
    """Module-level edges; importing ``a.b.c`` also runs ``a`` and ``a.b`` (their ``__init__``)."""
    edges: dict[str, list[str]] = {name: [] for name in modules}
    for module in modules.values():
        for target in module.imports:
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                parent = ".".join(parts[:i])
                if parent in modules and parent != module.name and parent not in edges[module.name]:
                    # a module never "imports" the package it lives in by being imported itself
                    if module.name.startswith(parent + ".") and i < len(parts):
                        continue
                    edges[module.name].append(parent)
    return edges


def find_cycles(edges: dict[str, list[str]]) -> list[list[str]]:
    """One cycle path per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def strongconnect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, []):
            if nxt not in index:
                strongconnect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in edges.get(node, []):
                components.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for node in sorted(edges):
            if node not in index:
                strongconnect(node)
    finally:
        sys.setrecursionlimit(limit)
    return [_cycle_path(component, edges) for component in components]


def _cycle_path(component: list[str], edges: dict[str, list[str]]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first within it)."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for nxt in edges[node]:
                if nxt not in members:
                    continue
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return [start, start]


def _face(package_dir: Path, room: str) -> set[str]:
    """The names a room's face exports (its ``__all__``)."""
    tree = ast.parse((package_dir / room / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)}
    return set()


def _room_errors(found: dict[str, Path], name: str, modules: dict[str, Module], root: Path) -> list[str]:
    """The room rules broken by the modules of package ``name`` (see :data:`ROOMS`, :data:`ROOM_USERS`)."""
    errors: list[str] = []
    faces = {
        package: {room: _face(found[package], room) for room in rules.allowed if (found[package] / room).is_dir()}
        for package, rules in ROOMS.items()
        if package in found
    }
    own = ROOMS.get(name, Rooms(allowed={}, base=frozenset()))
    for module in modules.values():
        rel = module.path.relative_to(root) if module.path.is_relative_to(root) else module.path
        parts = module.name.split(".")
        here = parts[1] if len(parts) > 1 and parts[1] in own.allowed and parts[1] in faces.get(name, {}) else None
        for target, line in module.named.items():
            package, *rest = target.split(".")
            if package not in faces:
                continue
            room = rest[0] if rest and rest[0] in faces[package] else None
            if package != name:  # another package: only the faces it is allowed, and the facade
                allowed = ROOM_USERS.get(name, {}).get(package)
                if allowed is None:
                    continue
                if room is None and rest:
                    errors.append(
                        f"{rel}:{line}: {name} imports {target} (only the facade {package} and its rooms' faces)"
                    )
                elif room is not None and room not in allowed:
                    may = ", ".join(sorted(allowed))
                    errors.append(f"{rel}:{line}: {name} imports the room {package}.{room} (it may import {may})")
                elif room is not None and len(rest) > 1 and rest[1] not in faces[package][room]:
                    errors.append(f"{rel}:{line}: {target} is private to the room {package}.{room}: import its face")
                continue
            if room is None:
                if here is not None and rest and rest[0] not in own.base:
                    errors.append(
                        f"{rel}:{line}: the room {name}.{here} imports {target} (a top module, not a base one)"
                    )
                continue
            if room == here:
                continue
            if here is not None and room not in own.allowed[here]:
                may = ", ".join(sorted(own.allowed[here])) or "no other room"
                errors.append(
                    f"{rel}:{line}: the room {name}.{here} imports the room {name}.{room} (it may import {may})"
                )
            elif len(rest) > 1 and rest[1] not in faces[package][room]:
                errors.append(f"{rel}:{line}: {target} is private to the room {name}.{room}: import its face")
    return errors


def check(root: Path, packages: list[str] | None = None) -> list[str]:
    """The errors for the packages under ``root`` (all ``konnectz_*`` packages when none named)."""
    found = find_packages(root)
    errors: list[str] = []
    names = packages or sorted(found)
    for name in names:
        if name not in found:
            errors.append(f"{name}: no package {name} under {root}/*/src/")
            continue
        modules = parse_package(found[name])
        for cycle in find_cycles(_edges(modules)):
            errors.append(f"{name}: import cycle: {' -> '.join(cycle)}")
        errors.extend(_room_errors(found, name, modules, root))
        allowed = ALLOWED.get(name)
        for module in modules.values():
            rel = module.path.relative_to(root) if module.path.is_relative_to(root) else module.path
            for other, line in module.packages.items():
                if allowed is not None and other not in allowed:
                    may = ", ".join(sorted(allowed)) or "no other first-party package"
                    errors.append(f"{rel}:{line}: {name} imports {other} (it may import {may})")
            for line, target in module.local_imports:
                errors.append(
                    f"{rel}:{line}: function-local import of {target} "
                    f"(move it to the top, or mark the line '{OK_MARK} <why>')"
                )
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--package", action="append", nargs="+", default=[], help="only these packages")
    args = parser.parse_args(argv)
    packages = [name for group in args.package for name in group]
    root = args.root.resolve()
    errors = check(root, packages or None)
    for error in errors:
        print(error)
    checked = ", ".join(packages) if packages else ", ".join(sorted(find_packages(root)))
    if errors:
        print(f"check_imports: {len(errors)} error(s) in {checked}")
        return 1
    print(
        "check_imports: no import cycle, no hidden import, no package imported upwards, "
        f"no room entered by a side door in {checked}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
