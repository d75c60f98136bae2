#!/usr/bin/env python3
"""Rewrite imports of the runner's former contract modules to ``konnectz_contracts`` (and, outside the
runner, of runner submodules to the ``konnectz_runner`` facade).

Usage::

    .venv/bin/python tools/rewrite_imports.py [--check] PATH...

PATHs are files or directories (``.py`` and ``.md`` files under them; ``.venv``, ``node_modules`` and
caches are skipped, and files with a ``# rewrite_imports: skip`` line). Idempotent: a second run
changes nothing. ``--check`` changes nothing and exits 1 when a file would change.

What it rewrites:

- ``from X import a, b as c`` statements (one line or parenthesised), split into one statement per
  module when the names now live in several: :data:`MODULES` maps whole modules that moved,
  :data:`SPLIT` the modules some names left (names not listed stay where they were);
- ``from konnectz_runner import mod`` of a moved module, and ``from konnectz_runner.steps import
  <kind>`` to the kind's config module when the file uses only config names of it;
- outside ``runner/`` (the api, the operator, the dev stack and their tests): ``from
  konnectz_runner.<submodule> import a`` to ``from konnectz_runner import a`` for names of the runner's
  facade (:data:`FACADE`, ``konnectz_runner/__init__.py``);
- dotted references in text (docstrings, comments, strings such as monkeypatch targets, Markdown):
  ``konnectz_runner.spec.FlowSpec`` -> ``konnectz_contracts.spec.FlowSpec``, and source paths
  ``runner/src/konnectz_runner/spec.py`` -> ``contracts/src/konnectz_contracts/spec.py``.

The same for the api's canvas models and node compilers, which moved into the contracts
(``konnectz_api.canvas`` -> ``konnectz_contracts.canvas``, ``konnectz_api.compilers._common`` ->
``konnectz_contracts.compiling``, ``konnectz_api.compilers.<kind>`` -> the kind's module in
``konnectz_contracts.steps`` / ``konnectz_contracts.triggers``; the catalogue-app compilers are now
the one module ``konnectz_api.compilers``).

Then the runner's rooms (issue 36, :data:`ROOMS`): its flat modules moved into six folders, each with
a face (``__init__.py``, its ``__all__``). An import of an old module (``konnectz_runner.worker``) or of
an old facade name (``from konnectz_runner import publish_run``, :data:`OLD_FACADE`) becomes, within
the room, an import of the room's module (``konnectz_runner.work.worker``) and elsewhere an import of
the room's face when the face exports the name (``from konnectz_runner.bus import publish_run``; an
alias of the face is kept: ``from konnectz_runner.bus import mark_active as mark``); dotted names and
source paths in text follow (``runner/.../engine.py`` -> ``runner/.../engine/flow.py``).

The result is sorted and formatted by ``ruff check --fix`` / ``ruff format`` afterwards (``make lint``
shows what is left).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

from konnectz_contracts import events

R = "konnectz_runner"
C = "konnectz_contracts"
A = "konnectz_api"

#: The api's node compilers that moved into their kind's contract module (compiler -> contract module).
_COMPILED_KINDS: dict[str, str] = {
    **{
        k: f"steps.{k}"
        for k in ("api_call", "coupon", "data_forwarder", "delay", "filter", "formatter", "generator", "iterator")
    },
    "splitter": "steps.splitter",
    "webhook": "triggers.webhook",
    "scheduler": "triggers.schedule",
    "form_input": "triggers.form",
}

#: Whole modules (and their submodules) that moved.
MODULES: dict[str, str] = {
    f"{R}.spec": f"{C}.spec",
    f"{R}.resource": f"{C}.resource",
    f"{R}.manifest": f"{C}.manifest",
    f"{R}.refs": f"{C}.refs",
    f"{R}.limits": f"{C}.limits",
    f"{R}.timezones": f"{C}.timezones",
    f"{R}.broker_token": f"{C}.broker_token",
    f"{R}.errors": f"{C}.errors",
    f"{R}.triggers": f"{C}.triggers",
    f"{R}.generate": "konnectz_tools.generate",
    # One kind, one definition: the canvas models, the compilers' helpers and each kind's compiler
    # moved into the contracts; what needs the catalogue is the api's one module konnectz_api.compilers.
    f"{A}.canvas": f"{C}.canvas",
    f"{A}.compilers._common": f"{C}.compiling",
    **{f"{A}.compilers.{old}": f"{C}.{new}" for old, new in _COMPILED_KINDS.items()},
    **{f"{A}.compilers.{old}": f"{A}.compilers" for old in ("app_event", "app_trigger", "script_trigger")},
}

_KIND_NAMES: dict[str, list[str]] = {
    "api_call": ["ApiCallStep", "Config", "KIND"],
    "app_event": ["AppEventStep", "Config", "KIND"],
    "coupon": ["ALPHABET", "Config", "ExpiryUnit", "INVALID_EXPIRY", "KIND", "UNITS"],
    "data_forwarder": ["Config", "KIND"],
    "delay": [
        "Config",
        "DELAY_TYPE_IDS",
        "DelayStep",
        "INTEGER_ONLY",
        "KIND",
        "MAX_DELAY",
        "MIN_SUSPEND",
        "UNIT_IDS",
        "from_timer_config",
    ],
    "filter": ["Condition", "Config", "KIND", "LABELS", "Operator"],
    "formatter": ["Config", "KIND", "MAX_DECIMALS", "MAX_PATTERN", "OPERATIONS", "Operation", "REQUIRED_OPTIONS"],
    "generator": ["CHARSETS", "Charset", "Config", "ItemKind", "KIND", "MAX_COUNT", "MAX_LENGTH", "What"],
    "iterator": ["Config", "KIND", "MAX_ITEMS", "ONLY_ONCE"],
    "splitter": ["Config", "KIND", "SEGMENTS", "Segment"],
}

#: The names of the runner's former events module, now konnectz_contracts.events: its __all__ and the
#: two others the runner's modules imported.
_EVENT_NAMES = [*events.__all__, "EVENTS_ACK_WAIT_SECONDS", "_runs_prefix"]

_QUOTA_NAMES = [
    "BLOCK_SECONDS",
    "KV_QUOTA_BLOCKS",
    "MAX_BATCH",
    "QUOTA_MANY_SUBJECT",
    "QUOTA_SUBJECT",
    "QuotaBlock",
    "QuotaReplies",
    "QuotaReply",
    "QuotaRequest",
    "QuotaRequests",
]
_BUDGET_NAMES = ["KV_BUDGETS", "MAX_RATE", "MIN_RATE", "TTL_SECONDS", "budget_key", "budget_usage"]
_CAPTURE_NAMES = [
    "CAPTURE_TTL_SECONDS",
    "KV_CAPTURING",
    "MAX_CAPTURE_BYTES",
    "STREAM_CAPTURES",
    "SUBJECTS_CAPTURES",
    "CaptureWindow",
    "CapturedRequest",
    "capture_subject",
    "valid_token",
]

#: Modules some names left: old module -> {name: new module}. Other names stay.
SPLIT: dict[str, dict[str, str]] = {
    f"{R}.events": {n: f"{C}.events" for n in _EVENT_NAMES},
    f"{R}.model": {n: f"{C}.model" for n in ("Strict", "KeyValue", "StepBase", "utcnow")},
    f"{R}.steps": {"Step": f"{C}.steps"},
    f"{R}.dates": {"DateUnit": f"{C}.formats", "DATE_UNITS": f"{C}.formats"},
    # Import cycles broken: netguard <-> aiohttp_transport, server <-> worker.
    f"{R}.netguard": {"outbound_transport": f"{R}.connect"},
    f"{R}.server": {n: f"{R}.connect" for n in ("CONNECT_DEADLINE_SECONDS", "USER_AGENT", "connect_nats")},
    **{f"{R}.steps.{kind}": {n: f"{C}.steps.{kind}" for n in names} for kind, names in _KIND_NAMES.items()},
    # The wire of quotas, rate budgets and capture, and the journal's and idempotency's bucket names:
    # agreed between api and runner, so contracts (issue 36).
    f"{R}.quota": {n: f"{C}.quota" for n in _QUOTA_NAMES},
    f"{R}.budgets": {n: f"{C}.budgets" for n in _BUDGET_NAMES},
    f"{R}.capture": {n: f"{C}.capture" for n in _CAPTURE_NAMES},
    f"{R}.journal": {"KV_STEPS": f"{C}.events"},
    f"{R}.idempotency": {"KV_IDEMPOTENCY": f"{C}.events"},
    **{m: {"KV_SLOTS": f"{C}.run_control"} for m in (f"{R}.slots", f"{R}.work.slots")},
    **{m: {"KV_LEADERS": f"{C}.events"} for m in (f"{R}.election", f"{R}.clock.election", f"{R}.clock")},
    # What the runner's package re-exported before the contracts moved out.
    R: {
        **{n: f"{C}.quota" for n in _QUOTA_NAMES},
        **{n: f"{C}.budgets" for n in _BUDGET_NAMES},
        **{n: f"{C}.spec" for n in ("ApiCallStep", "FlowSpec", "KeyValue", "Step", "Trigger", "WebhookTrigger")},
        **{n: f"{C}.errors" for n in ("ConfigError", "ConnectFailed", "RefusedError", "RunnerError", "StepError")},
        **{n: f"{C}.refs" for n in ("build_json_body", "resolve", "resolve_value")},
        **{n: f"{C}.events" for n in _EVENT_NAMES},
    },
}

#: The runner's facade before the rooms (issue 36): name -> the runner module defining it (or the module
#: and the name there). ``from konnectz_runner import <name>`` is rewritten to the room's face.
OLD_FACADE: dict[str, str | tuple[str, str]] = {
    "LIST_LIMIT": "active",
    "cancel_requested": "active",
    "clear_active": ("active", "clear"),
    "get_active": "active",
    "list_active": "active",
    "mark_active": ("active", "mark"),
    "request_cancel": "active",
    "run_state_buckets": ("active", "buckets"),
    "wake_waiting": ("active", "wake"),
    "AppRequest": "app_request",
    "build_event_request": "app_request",
    "build_test_request": "app_request",
    "dig": "app_request",
    "hook_error": "app_request",
    "is_expired": "app_request",
    "items_at": "app_request",
    "picked": "app_request",
    "secret_values": "app_request",
    "Budgets": "budgets",
    "close_window": "capture",
    "last_capture": "capture",
    "open_window": "capture",
    "BundleIndex": "catalogue",
    "CatalogueError": "catalogue",
    "GENERATED_BUNDLE": "catalogue",
    "default_root": "catalogue",
    "load_catalogue": "catalogue",
    "load_manifest": "catalogue",
    "Settings": "config",
    "execute": "engine",
    "step_result": "engine",
    "ensure_streams": "events",
    "events_consumer_config": "events",
    "publish_event": "events",
    "publish_run": "events",
    "stream_configs": "events",
    "IN_DOUBT_ERROR": "journal",
    "Outcome": "model",
    "StepContext": "model",
    "IPNetwork": "netguard",
    "NetGuard": "netguard",
    "guarded_transport": "netguard",
    "parse_networks": "netguard",
    "Outage": "outage",
    "nats_callbacks": "outage",
    "ERROR_BODY_CHARS": "outbound",
    "parse_body": "outbound",
    "send_outbound": ("outbound", "send"),
    "app_items": "steps.app_event",  # issue 36: it left the poller for the app_event step
    "origin_of": "step_secrets",
    "KINDS": "steps",
    "run_step": "steps",
    "remember_account": "steps.app_event",
    "join_merge": ("steps.join", "merge"),
    "RUNS_FAILED": "telemetry",
    "RUNS_FINISHED": "telemetry",
    "STEP_SECONDS": "telemetry",
    "setup_tracing": "telemetry",
    "tracer": "telemetry",
}

#: Issue 36: the runner's modules in rooms (old module -> room, name in the room). Each room's face is
#: its ``__init__.py``: its ``__all__`` is what other rooms, the api and the tools may import.
ROOMS: dict[str, dict[str, str]] = {
    "engine": {"engine": "flow", "journal": "journal", "model": "context", "dates": "dates", "steps": "steps"},
    "apps": {
        m: m
        for m in (
            "catalogue",
            "app_request",
            "outbound",
            "netguard",
            "aiohttp_transport",
            "aws_sigv4",
            "budgets",
            "step_secrets",
        )
    },
    "bus": {m: m for m in ("connect", "kv", "events", "active", "capture", "timers", "registry")},
    "ingress": {m: m for m in ("server", "webhook", "webhook_secrets", "signatures", "idempotency", "backlog")},
    "work": {m: m for m in ("worker", "slots", "quota", "failed_runs")},
    "clock": {m: m for m in ("scheduler", "poller", "election", "ticking")},
}
#: Old runner module -> its module in a room.
ROOM_MOVES: dict[str, str] = {
    f"{R}.{old}": f"{R}.{room}.{new}" for room, mods in ROOMS.items() for old, new in mods.items()
}
RUNNER_SRC = Path(__file__).resolve().parent.parent / "runner" / "src" / R


def _path(member: str, module: str) -> str:
    package, rest = module.split(".", 1)
    return f"{member}/src/{package}/{rest.replace('.', '/')}"


#: Source paths named in text (docs, comments, Makefiles).
PATHS: dict[str, str] = {
    **{
        _path("runner", old): _path("contracts", new)
        for old, new in MODULES.items()
        if old.startswith(R + ".") and new.startswith(C)
    },
    **{
        _path("api", old) + ".py": _path("contracts", new) + ".py"
        for old, new in MODULES.items()
        if old.startswith(A + ".") and new.startswith(C)
    },
    f"runner/src/{R}/generate.py": "tools/src/konnectz_tools/generate.py",
}

#: A split module imported whole for both its config names and its ``run``: see :func:`rewrite_imports`.
MIXED = "<mixed>"

#: A file holding this line is left alone (the tool's own tests quote old imports).
SKIP_MARK = "# rewrite_imports: " + "skip"

_SKIP_DIRS = {".venv", "node_modules", "__pycache__", ".git", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


def _moved_module(module: str) -> str | None:
    """The new name of ``module`` when it (or a package holding it) moved whole."""
    for old, new in MODULES.items():
        if module == old or module.startswith(old + "."):
            return new + module[len(old) :]
    return None


def _in_runner(path: Path) -> bool:
    parts = path.resolve().parts
    return any(parts[i] == "runner" and parts[i + 1 : i + 2] in (("src",), ("tests",)) for i in range(len(parts) - 1))


def _attrs(tree: ast.AST, alias: str) -> set[str]:
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == alias
    }


def _target(module: str, name: str, tree: ast.AST, alias: str, facade: bool) -> str:
    """The module ``name`` (imported from ``module``) is to be imported from."""
    moved = _moved_module(module)
    if moved is not None:
        return moved
    if module in SPLIT and name in SPLIT[module]:
        return SPLIT[module][name]
    # `from konnectz_runner import refs` (a moved module), `from konnectz_runner.steps import coupon`.
    sub = f"{module}.{name}"
    moved = _moved_module(sub)
    if moved is not None:
        return moved.rsplit(".", 1)[0]
    if sub in SPLIT and len(set(SPLIT[sub].values())) == 1:
        # `from konnectz_runner import events`, `from konnectz_runner.steps import delay`: a module
        # some names left, imported whole.
        parent, leaf = next(iter(SPLIT[sub].values())).rsplit(".", 1)
        used = _attrs(tree, alias)
        if leaf == name and used and used <= set(SPLIT[sub]):
            return parent
        if leaf == name and used & set(SPLIT[sub]):
            return MIXED
    return module


def _render(indent: str, module: str, names: list[str], comment: str) -> str:
    one = f"{indent}from {module} import {', '.join(names)}{comment}"
    if len(one) <= 120:
        return one
    body = "".join(f"{indent}    {n},\n" for n in names)
    return f"{indent}from {module} import (\n{body}{indent}){comment}"


def rewrite_imports(text: str, facade: bool) -> str:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    renames: list[tuple[str, str, set[str]]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        if not (node.module == R or node.module.startswith(R + ".") or _moved_module(node.module)):
            continue
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            shown = alias.name if alias.asname is None else f"{alias.name} as {alias.asname}"
            target = _target(node.module, alias.name, tree, alias.asname or alias.name, facade)
            if target == MIXED:
                # `from konnectz_runner.steps import delay` used for delay.run and delay.UNIT_IDS: the
                # config names are taken from `<alias>_config`, the kind's contracts module.
                local = alias.asname or alias.name
                renames.append((local, f"{local}_config", set(SPLIT[f"{node.module}.{alias.name}"])))
                moved_to = next(iter(SPLIT[f"{node.module}.{alias.name}"].values())).rsplit(".", 1)[0]
                groups.setdefault(moved_to, []).append(f"{alias.name} as {local}_config")
                target = node.module
            groups.setdefault(target, []).append(shown)
        if list(groups) == [node.module]:
            continue
        assert node.end_lineno is not None and node.end_col_offset is not None
        first, last = node.lineno - 1, node.end_lineno - 1
        indent = lines[first][: node.col_offset]
        rest = lines[last][node.end_col_offset :]
        comment = "  " + rest.strip() if rest.strip().startswith("#") else ""
        new = "\n".join(_render(indent, m, ns, comment) for m, ns in groups.items()) + "\n"
        edits.append((first, last, new))
    for first, last, new in sorted(edits, reverse=True):
        lines[first : last + 1] = [new]
    text = "".join(lines)
    for local, config, names in renames:
        pattern = re.compile(rf"(?<![\w.]){re.escape(local)}\.({'|'.join(sorted(names))})\b")
        text = pattern.sub(rf"{config}.\1", text)
    return text


def _old_room_module(module: str) -> str | None:
    """The module in a room of an old runner module (``steps``, a package, with its submodules)."""
    for old, new in ROOM_MOVES.items():
        if module == old or (old == f"{R}.steps" and module.startswith(old + ".")):
            return new + module[len(old) :]
    return None


_FACES: dict[str, dict[tuple[str, str], str]] = {}


def _face(room: str) -> dict[tuple[str, str], str]:
    """What a room's face exports: (module, name there) -> the name in its ``__all__``."""
    if room not in _FACES:
        index: dict[tuple[str, str], str] = {}
        path = RUNNER_SRC / room / "__init__.py"
        tree = ast.parse(path.read_text()) if path.is_file() else ast.Module(body=[], type_ignores=[])
        public = _all_of(tree)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if (alias.asname or alias.name) in public:
                        index[(node.module, alias.name)] = alias.asname or alias.name
        _FACES[room] = index
    return _FACES[room]


def _all_of(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)}
    return set()


def _facade_names() -> set[str]:
    path = RUNNER_SRC / "__init__.py"
    return _all_of(ast.parse(path.read_text())) if path.is_file() else set()


def _room_of_file(path: Path) -> str | None:
    parts = path.resolve().parts
    for i in range(len(parts) - 3):
        if parts[i : i + 3] == ("runner", "src", R) and parts[i + 3] in ROOMS:
            return parts[i + 3]
    return None


def _in_room(module: str, name: str, file_room: str | None) -> tuple[str, str]:
    """Where ``name`` of the room module ``module`` is imported from: the module itself within its
    room, its room's face elsewhere when the face exports it (under the face's name), else the module."""
    room = module.split(".")[1]
    if room != file_room:
        exported = _face(room).get((module, name))
        if exported is not None:
            return f"{R}.{room}", exported
    return module, name


def _room_target(module: str, name: str, file_room: str | None) -> tuple[str, str] | None:
    """The (module, name) an old-layout import of ``name`` from ``module`` becomes, or None to keep it."""
    if module == R:
        if name in _facade_names() or name in ROOMS:  # `from konnectz_runner import engine`: the room
            return None
        if name in OLD_FACADE:
            old = OLD_FACADE[name]
            old_module, old_name = (old, name) if isinstance(old, str) else old
            moved = _old_room_module(f"{R}.{old_module}")
            if moved is None:  # a module at the top (config, telemetry, outage)
                return f"{R}.{old_module}", old_name
            return _in_room(moved, old_name, file_room)
        moved = _old_room_module(f"{R}.{name}")  # `from konnectz_runner import outbound`
        if moved is None:
            return None
        parent, leaf = moved.rsplit(".", 1)
        return _in_room(parent, leaf, file_room)
    if module == f"{R}.engine":  # the engine module, now also the engine room's face
        if name in ROOMS["engine"].values() or (file_room != "engine" and name in _face("engine").values()):
            return None
    moved = _old_room_module(module)
    if moved is None:
        return None
    return _in_room(moved, name, file_room)


def rewrite_rooms(text: str, file_room: str | None) -> str:
    """Imports of the runner's old flat modules become imports of its rooms (faces outside a room)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        if not (node.module == R or node.module.startswith(R + ".")):
            continue
        groups: dict[str, list[str]] = {}
        changed = False
        for alias in node.names:
            local = alias.asname or alias.name
            target = _room_target(node.module, alias.name, file_room)
            if target is None:
                module, name = node.module, alias.name
            else:
                module, name = target
                changed = True
            groups.setdefault(module, []).append(name if name == local else f"{name} as {local}")
        if not changed:
            continue
        assert node.end_lineno is not None and node.end_col_offset is not None
        first, last = node.lineno - 1, node.end_lineno - 1
        indent = lines[first][: node.col_offset]
        rest = lines[last][node.end_col_offset :]
        comment = "  " + rest.strip() if rest.strip().startswith("#") else ""
        new = "\n".join(_render(indent, m, ns, comment) for m, ns in groups.items()) + "\n"
        edits.append((first, last, new))
    for first, last, new in sorted(edits, reverse=True):
        lines[first : last + 1] = [new]
    return "".join(lines)


_ROOM_DOTTED = re.compile(r"\bkonnectz_runner((?:\.[A-Za-z_]\w*)+)")
_OLD_NAMES = "|".join(sorted((old.split(".", 1)[1] for old in ROOM_MOVES), key=len, reverse=True))
_ROOM_PATH = re.compile(
    rf"(runner/src/konnectz_runner/|runner/\.\.\./|konnectz_runner/)(?:({_OLD_NAMES})\.py\b|(steps)/)"
)


def _room_dotted(match: re.Match[str]) -> str:
    parts = match.group(1)[1:].split(".")
    if parts[0] == "engine":
        if len(parts) == 1 or parts[1] in ROOMS["engine"].values() or parts[1] in _face("engine").values():
            return match.group(0)
    moved = _old_room_module(f"{R}.{parts[0]}")
    if moved is None:
        return match.group(0)
    return ".".join([moved, *parts[1:]])


def _room_path(match: re.Match[str]) -> str:
    prefix, module, package = match.group(1), match.group(2), match.group(3)
    new = _old_room_module(f"{R}.{module or package}")
    assert new is not None
    rest = new.split(".", 1)[1].replace(".", "/")
    return f"{prefix}{rest}.py" if module else f"{prefix}{rest}/"


def rewrite_room_text(text: str) -> str:
    text = _ROOM_PATH.sub(_room_path, text)
    return _ROOM_DOTTED.sub(_room_dotted, text)


_DOTTED = re.compile(r"\b(konnectz_runner|konnectz_api)((?:\.[A-Za-z_]\w*)+)")


def _dotted(match: re.Match[str]) -> str:
    base, parts = match.group(1), match.group(2)[1:].split(".")
    # The longest module prefix that moved, or a split module followed by a name that left it.
    for i in range(len(parts), 0, -1):
        module = ".".join([base, *parts[:i]])
        rest = parts[i:]
        moved = _moved_module(module)
        if moved is not None:
            return ".".join([moved, *rest])
        if module in SPLIT and rest and rest[0] in SPLIT[module]:
            return ".".join([SPLIT[module][rest[0]], *rest])
    return match.group(0)


def rewrite_text(text: str) -> str:
    for old, new in PATHS.items():
        text = text.replace(old, new)
    return _DOTTED.sub(_dotted, text)


def rewrite(path: Path) -> str:
    text = path.read_text()
    if path.suffix == ".py":
        text = rewrite_imports(text, facade=not _in_runner(path))
        text = rewrite_rooms(text, _room_of_file(path))
    return rewrite_room_text(rewrite_text(text))


def files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for arg in paths:
        path = Path(arg)
        if path.is_file():
            found.append(path)
            continue
        for sub in sorted(path.rglob("*")):
            if sub.suffix in (".py", ".md") and sub.is_file() and not _SKIP_DIRS & set(sub.parts):
                found.append(sub)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a file would change")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    changed = []
    for path in files(args.paths):
        if path.resolve() == Path(__file__).resolve():
            continue
        old = path.read_text()
        if SKIP_MARK in old:
            continue
        new = rewrite(path)
        if new != old:
            changed.append(path)
            if not args.check:
                path.write_text(new)
    for path in changed:
        print(("would rewrite " if args.check else "rewrote ") + str(path))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
