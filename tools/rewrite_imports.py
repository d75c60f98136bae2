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
_BUDGET_NAMES = ["KV_BUDGETS", "MAX_RATE", "MIN_RATE", "TTL_SECONDS", "budget_key"]
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

#: The runner's facade (``konnectz_runner/__init__.py``): name -> the runner module defining it.
FACADE: dict[str, str] = {
    "Settings": "config",
    "execute": "engine",
    "step_result": "engine",
    "ensure_streams": "events",
    "events_consumer_config": "events",
    "publish_event": "events",
    "publish_run": "events",
    "stream_configs": "events",
    "Outcome": "model",
    "StepContext": "model",
    "IPNetwork": "netguard",
    "NetGuard": "netguard",
    "guarded_transport": "netguard",
    "parse_networks": "netguard",
    "KINDS": "steps",
    "run_step": "steps",
    "AppRequest": "app_request",
    "build_event_request": "app_request",
    "build_test_request": "app_request",
    "dig": "app_request",
    "hook_error": "app_request",
    "is_expired": "app_request",
    "items_at": "app_request",
    "picked": "app_request",
    "secret_values": "app_request",
    "GENERATED_BUNDLE": "catalogue",
    "BundleIndex": "catalogue",
    "CatalogueError": "catalogue",
    "default_root": "catalogue",
    "load_catalogue": "catalogue",
    "load_manifest": "catalogue",
    "RUNS_FAILED": "telemetry",
    "RUNS_FINISHED": "telemetry",
    "STEP_SECONDS": "telemetry",
    "setup_tracing": "telemetry",
    "tracer": "telemetry",
    "Outage": "outage",
    "nats_callbacks": "outage",
    "origin_of": "step_secrets",
    "app_items": "poller",
    "IN_DOUBT_ERROR": "journal",
    "close_window": "capture",
    "last_capture": "capture",
    "open_window": "capture",
    "ERROR_BODY_CHARS": "outbound",
    "parse_body": "outbound",
}


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
    if facade and module.startswith(R + ".") and name in FACADE and FACADE[name] == module[len(R) + 1 :]:
        return R
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
    return rewrite_text(text)


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
