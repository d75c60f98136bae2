"""One kind, one set of fields: a built-in add-on's catalogue fields (``catalogue/apps/<app>.yaml``), its
``Config`` and its ``compile_node`` (``contracts/src/konnectz_contracts/steps/<kind>.py``) agree.

For every in-house app whose action names a ``step_kind`` (the triggers' fields are their cards'):

- the kind's module is found (``konnectz_contracts.steps``) and names the app in ``PROVIDERS``;
- every catalogue field is read by ``compile_node``: a node with every field filled (a select's option,
  a number, a reference for text) compiles, and changing one field's value changes the compiled
  ``Config`` (or is refused with a message): a key spelled differently in the YAML and in
  ``compile_node`` fails here;
- every ``Config`` field that no catalogue field sets is set by the kind's own editor card
  (``web/src/editor/nodes/<kind>/``): an add-on shown by the general action card must fill its whole
  ``Config`` from its catalogue fields.

An add-on whose card writes its settings elsewhere than the catalogue fields is listed in
``ELSEWHERE`` with the reason; the test fails when such an add-on starts to pass the check (the entry
is then removed).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from konnectz_contracts.canvas import Canvas
from konnectz_contracts.compiling import CompileError
from konnectz_contracts.model import StepBase
from konnectz_contracts.steps import COMPILERS
from konnectz_devstack.testing import canvas_node, chain_canvas

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "catalogue" / "apps"
CARDS = ROOT / "web" / "src" / "editor" / "nodes"

#: kind -> why its catalogue fields are not what ``compile_node`` reads.
ELSEWHERE = {
    "delay": "the Delay card writes data.timerConfigs (delay_type as a number, delay_unit, delay_value); "
    "compile_node reads only those",
}

#: kind -> its Config fields that the general action card sets besides the catalogue fields, and how.
CARD_SETS = {
    "mcp_tool": {
        "account_id": "the card's account section (an MCP Server account)",
        "arguments": "the fields fetched from the chosen tool's input schema (fetch-fields: arg.<name>)",
    },
}


def _events() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    found = []
    for path in sorted(APPS.glob("*.yaml")):
        app = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        if (app.get("source") or {}).get("kind") != "in-house":
            continue
        for event in app.get("events") or []:
            # (a search with a step kind is a source of options the api lists itself: MCP Server's tools)
            if event.get("step_kind") and event.get("kind") == "action":
                found.append((path.name, app, event))
    return found


EVENTS = _events()


def _module(kind: str) -> Any:
    return importlib.import_module(f"konnectz_contracts.steps.{kind}")


def _value(field: dict[str, Any], *, other: bool = False) -> Any:
    """A valid value of the field: an option (another one when ``other``), a number, a reference."""
    options = [o["value"] for o in field.get("options") or []]
    if options:
        default = field.get("default")
        ordered = [o for o in options if o != default] + [o for o in options if o == default]
        return ordered[1 % len(ordered)] if other else ordered[0]
    if field.get("type") in ("integer", "number"):
        return 37 if other else 23
    return "{{node-1.other}}" if other else "{{node-1.value}}"


def _compile(app: dict[str, Any], values: dict[str, Any]) -> BaseModel:
    responses = [{"config_key": key, "value": value} for key, value in values.items()]
    canvas = chain_canvas(
        [
            canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
            # An add-on with an account (MCP Server) reads it from the node; the others ignore it.
            canvas_node(
                "node-2", "ActionNode", app["key"], 2, app["name"], configResponses=responses, selectedAccount={"id": 7}
            ),
        ],
        "fields",
    )
    node = Canvas.model_validate(canvas).node("node-2")
    assert node is not None
    compiled = COMPILERS[app["key"]](node)
    return compiled[-1] if isinstance(compiled, list) else compiled


def _disagreements(app: dict[str, Any], event: dict[str, Any]) -> list[str]:
    """What the catalogue's fields and the kind's compile_node and Config disagree on."""
    kind = event["step_kind"]
    fields = event.get("fields") or []
    problems = []
    module = _module(kind)
    if app["key"] not in getattr(module, "PROVIDERS", ()):
        problems.append(f"{module.__name__}.PROVIDERS does not name the app {app['key']!r}")
    base = {field["key"]: _value(field) for field in fields}
    set_by_fields: set[str] = set()
    if fields:
        try:
            compiled = _compile(app, base)
        except CompileError as exc:
            return [*problems, f"a node with every catalogue field filled does not compile: {exc}"]
        for field in fields:
            try:
                changed = _compile(app, {**base, field["key"]: _value(field, other=True)})
            except CompileError:
                continue  # read, and refused: a message names it
            moved = {name for name in type(compiled).model_fields if getattr(compiled, name) != getattr(changed, name)}
            if not moved:
                problems.append(f"the catalogue field {field['key']!r} is not read by compile_node")
            set_by_fields |= moved
    config = type(_compile(app, base)) if fields else None
    if config is not None:
        unset = set(config.model_fields) - set(StepBase.model_fields) - {"kind"} - set_by_fields
        unset -= set(CARD_SETS.get(kind, {}))
        card = any((CARDS / folder).is_dir() for folder in _card_folders(kind, app["key"]))
        if unset and not card:
            problems.append(
                f"Config fields {sorted(unset)} are set by no catalogue field and {kind} has no card of its own "
                f"(web/src/editor/nodes/{kind}/)"
            )
    return problems


def _card_folders(kind: str, app_key: str) -> set[str]:
    """``data_forwarder`` -> ``dataForwarder``: the editor's folder names are camelCase."""

    def camel(name: str) -> str:
        head, *rest = name.split("_")
        return head + "".join(part.capitalize() for part in rest)

    return {camel(kind), camel(app_key)}


@pytest.mark.parametrize(("file", "app", "event"), EVENTS, ids=[f"{f}:{e['key']}" for f, _a, e in EVENTS])
def test_the_catalogue_fields_the_config_and_compile_node_of_an_add_on_agree(
    file: str, app: dict[str, Any], event: dict[str, Any]
) -> None:
    problems = _disagreements(app, event)
    if event["step_kind"] in ELSEWHERE:
        assert problems, f"{file}: the check passes now: remove {event['step_kind']!r} from ELSEWHERE"
        return
    assert problems == [], f"{file}: {problems}"


def test_every_built_in_add_on_is_checked() -> None:
    kinds = {event["step_kind"] for _file, _app, event in EVENTS}
    assert {"hash", "splitter", "iterator", "formatter", "generator", "coupon"} <= kinds
    assert set(ELSEWHERE) <= kinds


def test_a_field_spelled_differently_in_the_catalogue_fails() -> None:
    app = next(app for _file, app, _event in EVENTS if app["key"] == "hash")
    event = {**app["events"][0], "fields": [dict(f) for f in app["events"][0]["fields"]]}
    event["fields"][2]["key"] = "encodng"  # a typo: compile_node reads 'encoding'
    assert _disagreements(app, event) == [
        "the catalogue field 'encodng' is not read by compile_node",
        "Config fields ['encoding'] are set by no catalogue field and hash has no card of its own "
        "(web/src/editor/nodes/hash/)",
    ]
