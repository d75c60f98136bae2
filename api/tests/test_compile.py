import copy
import itertools
from typing import Any

import pytest

from konnectz_api.compile.compilers import PENDING, STEP_COMPILERS
from konnectz_api.compile.flow import CompileError, compile_flow
from konnectz_api.compile.plan import app_names, plan
from konnectz_contracts.canvas import NODE_TYPES, parse_canvas
from konnectz_contracts.steps.filter import LABELS
from konnectz_runner.apps import default_root, load_catalogue
from konnectz_runner.engine import KINDS


def node(node_id: str, type_: str, provider: str, index: int, name: str = "", **data: Any) -> dict[str, Any]:
    return {
        "id": node_id,
        "type": type_,
        "position": {"x": 150 * index, "y": 0},
        "data": {
            "node_id": node_id,
            "app_detail": {
                "name": name or provider.title(),
                "provider": provider,
                "app_index": index,
                "side": "left" if index == 1 else "right",
            },
            **data,
        },
    }


def webhook() -> dict[str, Any]:
    return node("node-1", "WebhookInner", "webhook", 1, "Webhook")


def api_node(node_id: str, index: int, url: str = "https://a.example/y", **details: Any) -> dict[str, Any]:
    return node(
        node_id,
        "Api",
        "api",
        index,
        "API Call",
        selectedValue={"wrap_in_array": "NO", "payload_type": "JSON", "apiDetails": {"endpointURL": url, **details}},
    )


def config(**values: Any) -> list[dict[str, Any]]:
    return [{"label": k, "config_key": k, "value": v} for k, v in values.items()]


def chain(*nodes: dict[str, Any]) -> dict[str, Any]:
    links = [{"source": a["id"], "target": b["id"]} for a, b in itertools.pairwise(nodes)]
    return {"apps": list(nodes), "links": links, "dataForSelect": {}, "flowName": "f"}


def compile_(c: dict[str, Any]):
    return compile_flow(c, konnect_id=7, owner_id=3, name="n", webhook_token="t" * 43)


def test_every_runner_kind_has_a_compiler_and_every_node_type_parses():
    compiled_kinds = {f.__module__.rsplit(".", 1)[1] for f in STEP_COMPILERS.values()}
    # Catalogue apps: konnectz_api.compile.compilers.compile_app_event, or the step kind an app's event names
    # (Ask AI on a model provider's app).
    by_events = {e.step_kind for app in load_catalogue(default_root()) for e in app.events if e.step_kind}
    assert set(KINDS) <= compiled_kinds | {"app_event"} | by_events
    assert "ask_ai" in by_events
    for t in NODE_TYPES:
        parsed = parse_canvas({"apps": [{"id": "n", "type": t}]})
        assert parsed.apps[0].type == t
    assert not {"scheduler", "form_input", "delay"} & set(PENDING)


def test_order_follows_the_links_not_app_index():
    a = api_node("node-2", 2, "https://a.example/")
    b = api_node("node-3", 3, "https://b.example/")
    c = api_node("node-4", 4, "https://c.example/")
    canvas = chain(webhook(), c, a, b)  # trigger -> node-4 -> node-2 -> node-3
    spec = compile_(canvas)
    assert [s.id for s in spec.steps] == ["node-4", "node-2", "node-3"]
    assert app_names(canvas) == ("Webhook", ["API Call", "API Call", "API Call"])


def test_branches_run_in_topological_order():
    a, b, c = api_node("node-2", 2), api_node("node-3", 3), api_node("node-4", 4)
    canvas = {
        "apps": [webhook(), c, b, a],
        "links": [
            {"source": "node-1", "target": "node-3"},
            {"source": "node-1", "target": "node-2"},
            {"source": "node-2", "target": "node-4"},
            {"source": "node-3", "target": "node-4"},
        ],
    }
    assert [s.id for s in compile_(canvas).steps] == ["node-2", "node-3", "node-4"]


def test_every_add_on_compiles_to_its_runner_step():
    nodes = [
        webhook(),
        node(
            "node-2",
            "Filter",
            "conditioner",
            2,
            filterValues=[
                {
                    "field": {"key": "total", "value": "{{node-1.total}}"},
                    "operator": "Greater Than",
                    "valueOfFilter": "10",
                },
                {"field": "{{node-1.email}}", "operator": {"label": "End With", "value": "End With"}, "value": "@x.io"},
            ],
        ),
        node(
            "node-3", "Formatter", "formatter", 3, configResponses=config(operation="uppercase", input="{{node-1.n}}")
        ),
        node(
            "node-4",
            "InHouse",
            "splitter",
            4,
            configResponses=config(input="{{node-3.output}}", separator=" "),
            inHouseAppConfig={"segmentIndex": 2},
        ),
        node("node-5", "Generator", "generator", 5, configResponses=config(type="number", min=1, max=6)),
        node("node-6", "Coupon", "coupon", 6, inHouseAppConfig={"coupon": {"expiryNum": "3", "duration": "Week"}}),
        node(
            "node-7",
            "Api",
            "data_forwarder",
            7,
            keyList=["{{node-1.customer.email}}", {"key": "code", "value": "{{node-6.coupon_code}}"}],
        ),
        node("node-8", "InHouse", "iterator", 8, configResponses=config(list="{{node-1.items}}")),
        api_node(
            "node-9",
            9,
            "https://a.example/{{node-8.sku}}",
            method="put",
            headers=[{"key": "X-A", "value": "{{node-7.code}}"}, {"key": "", "value": ""}],
        ),
    ]
    spec = compile_(chain(*nodes))
    kinds = [s.kind for s in spec.steps]
    assert kinds == ["filter", "formatter", "splitter", "generator", "coupon", "data_forwarder", "iterator", "api_call"]
    flt, fmt, spl, gen, cpn, fwd, itr, call = spec.steps
    assert [(c.field, c.operator, c.value, c.join) for c in flt.conditions] == [
        ("{{node-1.total}}", "greater_than", "10", "AND"),
        ("{{node-1.email}}", "ends_with", "@x.io", "AND"),
    ]
    assert (fmt.operation, fmt.input) == ("text.upper", "{{node-1.n}}")
    assert (spl.segment, spl.separator) == ("Last", " ")
    assert (gen.what, gen.min, gen.max) == ("random_number", 1, 6)
    assert (cpn.expiry_number, cpn.expiry_unit) == (3, "Week")
    assert [(k.key, k.value) for k in fwd.keys] == [
        ("email", "{{node-1.customer.email}}"),
        ("code", "{{node-6.coupon_code}}"),
    ]
    assert itr.input == "{{node-1.items}}"
    assert (call.method, [h.key for h in call.headers]) == ("PUT", ["X-A"])


@pytest.mark.parametrize("label", list(LABELS.values()))
def test_all_twelve_filter_labels_compile(label):
    flt = node(
        "node-2",
        "Filter",
        "conditioner",
        2,
        filterValues=[{"field": {"key": "a"}, "selectedNodeId": "node-1", "operator": label, "value": "x"}],
    )
    (step,) = compile_(chain(webhook(), flt)).steps
    assert LABELS[step.conditions[0].operator] == label
    assert step.conditions[0].field == "{{node-1.a}}"


def test_filter_joins_are_recorded_on_the_previous_condition():
    conditions = [
        {"field": "{{node-1.a}}", "operator": "Is Exist", "joinWith": "+OR"},
        {"field": "{{node-1.b}}", "operator": "Is Exist", "joinWith": "+And"},
        {"field": "{{node-1.c}}", "operator": "Is Exist"},
        {"field": "{{node-1.d}}", "operator": "Is Exist", "queryOperator": "OR"},
    ]
    (step,) = compile_(chain(webhook(), node("node-2", "Filter", "conditioner", 2, filterValues=conditions))).steps
    assert [c.join for c in step.conditions] == ["AND", "OR", "AND", "OR"]


def _with(extra: dict[str, Any]) -> dict[str, Any]:
    return chain(webhook(), extra)


@pytest.mark.parametrize(
    ("canvas", "message"),
    [
        ({"apps": [api_node("node-2", 2)]}, "^Trigger not chosen$"),
        ({"apps": [webhook()]}, "Add at least one action"),
        (_with(api_node("node-2", 2, "ftp://x")), r"^API Call \(node-2\): .*must start with http"),
        (_with(api_node("node-2", 2, method="TRACE")), r"API Call \(node-2\): unsupported method"),
        (_with(api_node("node-2", 2, headers=[{"key": "", "value": "v"}])), "has a value but no key"),
        (
            _with(api_node("node-2", 2, "https://x/{{node-2.a}}")),
            "The same app cannot serve as both the source and the target",
        ),
        (_with(api_node("node-2", 2, "https://x/{{node-9.a}}")), "does not name the output of a node before this one"),
        (_with(node("node-2", "Coupon", "coupon", 2)), r"^Coupon \(node-2\): Please Fill Valid Expiry Number$"),
        (
            _with(node("node-2", "Coupon", "coupon", 2, inHouseAppConfig={"coupon": {"expiryNum": 0}})),
            "Please Fill Valid Expiry Number",
        ),
        (
            _with(node("node-2", "Coupon", "coupon", 2, inHouseAppConfig={"coupon": {"expiryNum": "1.5"}})),
            "Please Fill Integer Only",
        ),
        (
            _with(
                node(
                    "node-2", "Coupon", "coupon", 2, inHouseAppConfig={"coupon": {"expiryNum": 2, "duration": "Hours"}}
                )
            ),
            "expiry unit",
        ),
        (
            _with(
                node(
                    "node-2",
                    "Filter",
                    "conditioner",
                    2,
                    filterValues=[{"field": "{{node-1.a}}", "operator": "Sounds Like"}],
                )
            ),
            "unknown operator",
        ),
        (_with(node("node-2", "Filter", "conditioner", 2, filterValues=[])), "at least one condition"),
        (
            _with(node("node-2", "Formatter", "formatter", 2, configResponses=config(operation="text.replace"))),
            r"Formatter \(node-2\): .*needs find",
        ),
        (_with(node("node-2", "Formatter", "formatter", 2)), "choose an operation"),
        (
            _with(node("node-2", "InHouse", "splitter", 2, inHouseAppConfig={"segmentIndex": 9})),
            "Segment must be one of",
        ),
        (_with(node("node-2", "InHouse", "iterator", 2)), "choose the list"),
        (
            _with(node("node-2", "Generator", "generator", 2, configResponses=config(what="dice"))),
            r"Generator \(node-2\): what",
        ),
        (_with(node("node-2", "Api", "data_forwarder", 2, keyList=["plain"])), "must be a reference"),
        (_with(node("node-2", "InHouse", "delay", 2)), r"Delay \(node-2\): Please fill the values of mandatory fields"),
        (_with(node("node-2", "ActionNode", "slack", 2)), "app 'slack' cannot run yet"),
        (
            chain(node("node-1", "Scheduler", "scheduler", 1), api_node("node-2", 2)),
            r"Scheduler \(node-1\): Please fill the values of mandatory fields",
        ),
        (_with({**api_node("node-2", 2), "type": "Bogus"}), r"API Call \(node-2\): unknown node type"),
        (_with({**api_node("node-2", 2), "type": None}), "unknown node type|has no type"),
        ({"apps": [webhook(), {"id": "x", "data": {}}]}, r"Node \(x\): the node has no type"),
        ({"apps": "x"}, "must be a list"),
        ({"apps": [webhook(), webhook()]}, "node ids must be unique"),
        ({"apps": [webhook(), {**api_node("node-2", 2), "data": {"app_detail": {"app_index": 1}}}]}, "one trigger"),
    ],
)
def test_invalid_canvases_name_the_node_and_use_the_spec_messages(canvas, message):
    with pytest.raises(CompileError, match=message):
        compile_(copy.deepcopy(canvas))


def test_link_rules():
    a = api_node("node-2", 2)
    with pytest.raises(CompileError, match="The same app cannot serve as both the source and the target"):
        compile_({"apps": [webhook(), a], "links": [{"source": "node-2", "target": "node-2"}]})
    with pytest.raises(CompileError, match=r"^API Call \(node-2\): Can not be move backward as Action app exists$"):
        compile_(
            {
                "apps": [webhook(), a],
                "links": [{"source": "node-1", "target": "node-2"}, {"source": "node-2", "target": "node-1"}],
            }
        )
    with pytest.raises(CompileError, match="unknown node 'ghost'"):
        compile_({"apps": [webhook(), a], "links": [{"source": "node-1", "target": "ghost"}]})
    with pytest.raises(CompileError, match=r"API Call \(node-2\): link this node into the flow"):
        compile_({"apps": [webhook(), a], "links": []})
    b = api_node("node-3", 3)
    with pytest.raises(CompileError, match="the links form a loop"):
        compile_(
            {
                "apps": [webhook(), a, b],
                "links": [
                    {"source": "node-1", "target": "node-2"},
                    {"source": "node-2", "target": "node-3"},
                    {"source": "node-3", "target": "node-2"},
                ],
            }
        )


def test_the_iterator_can_only_be_used_once():
    it = lambda i: node(f"node-{i}", "InHouse", "iterator", i, configResponses=config(list="{{node-1.items}}"))  # noqa: E731
    with pytest.raises(CompileError, match=r"^Iterator \(node-3\): The iterator can only be used once\.$"):
        compile_(chain(webhook(), it(2), it(3), api_node("node-4", 4)))


def test_hostile_nodes_are_compile_errors_not_crashes():
    huge = _with(api_node("node-2", 2, headers=[{"key": "k", "value": {"nested": 1}}]))
    with pytest.raises(CompileError, match="must be text"):
        compile_(huge)
    nul = _with(api_node("node-2", 2, "https://x.example/\x00"))
    assert compile_(nul).steps[0].url.endswith("\x00")  # kept as text: the runner refuses the URL at run time
    many = _with(
        node(
            "node-2",
            "Filter",
            "conditioner",
            2,
            "Filter",
            filterValues=[{"field": "{{node-1.a}}", "operator": "Is Exist"}] * 51,
        )
    )
    with pytest.raises(CompileError, match=r"Filter \(node-2\): data.filterValues"):
        compile_(many)
    assert plan(chain(webhook(), api_node("node-2", 2))).ancestors("node-2") == {"node-1"}


def test_app_names_for_lists():
    assert app_names({"apps": "broken"}) == (None, [])
    assert app_names({"apps": [{"id": "a", "data": {"app_detail": {"name": "Hook", "app_index": 1}}}]}) == ("Hook", [])


def scheduler(**value: Any) -> dict[str, Any]:
    return node("node-1", "Scheduler", "scheduler", 1, "Scheduler", selectedValue=value)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ({"schedule_type": "Once", "schedule_time": "2031-05-04 09:30"}, "Once"),
        ({"schedule_type": "Everyday", "schedule_time": "09:30"}, "Everyday"),
        ({"schedule_type": "DaysOfTheWeek", "schedule_time": "09:30", "days": ["Monday", "Fri"]}, "DaysOfTheWeek"),
        ({"schedule_type": "DaysOfTheMonth", "schedule_time": "09:30", "dates": [1, 15, 31]}, "DaysOfTheMonth"),
        ({"schedule_type": "AtRegularIntervals", "every": "2", "time_span": "Hours"}, "AtRegularIntervals"),
    ],
)
def test_scheduler_triggers_compile_in_the_owners_time_zone(value, kind):
    spec = compile_flow(
        chain(scheduler(**value), api_node("node-2", 2)),
        konnect_id=7,
        owner_id=3,
        name="n",
        webhook_token="t" * 43,
        timezone="Europe/Berlin",
    )
    assert spec.trigger.kind == "schedule"
    assert spec.trigger.timezone == "Europe/Berlin"
    assert spec.trigger.schedule.schedule_type == kind


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({}, "Please fill the values of mandatory fields before Testing"),
        ({"schedule_type": "DaysOfTheWeek", "schedule_time": "09:30", "days": []}, "choose the days of the week"),
        ({"schedule_type": "AtRegularIntervals", "every": "2", "time_span": "Years"}, "Minutes, Hours, Days or Weeks"),
        ({"schedule_type": "Sometimes"}, "unknown schedule type"),
    ],
)
def test_a_bad_schedule_names_the_scheduler_node(value, message):
    with pytest.raises(CompileError, match=r"^Scheduler \(node-1\): .*" + message):
        compile_(chain(scheduler(**value), api_node("node-2", 2)))


def test_a_form_trigger_is_served_at_the_konnects_token():
    fields = [
        {"key": "email", "label": "Your e-mail", "type": "email", "required": True},
        {"key": "plan", "label": "Plan", "type": "select", "options": ["Free", "Team"]},
    ]
    form = node("node-1", "FormInput", "form_input", 1, "Form", formFields=fields, formTitle="Sign up")
    spec = compile_(chain(form, api_node("node-2", 2)))
    assert spec.trigger.kind == "form"
    assert spec.trigger.token == "t" * 43
    assert spec.trigger.title == "Sign up"
    assert [f.key for f in spec.trigger.fields] == ["email", "plan"]
    empty = node("node-1", "FormInput", "form_input", 1, "Form")
    with pytest.raises(CompileError, match=r"Form \(node-1\): Add at least one field"):
        compile_(chain(empty, api_node("node-2", 2)))
    bad = node(
        "node-1", "FormInput", "form_input", 1, "Form", formFields=[{"key": "a", "label": "A", "type": "select"}]
    )
    with pytest.raises(CompileError, match="a select needs options"):
        compile_(chain(bad, api_node("node-2", 2)))


def delay_node(node_id: str, index: int, **timer: Any) -> dict[str, Any]:
    return node(node_id, "InHouse", "delay", index, "Delay", timerConfigs=timer)


def test_the_delay_add_on_and_set_delay_compile_to_delay_steps():
    spec = compile_(
        chain(
            webhook(),
            delay_node("node-2", 2, delay_type=515, delay_unit=322, delay_value="3"),
            node(
                "node-3",
                "Api",
                "api",
                3,
                "API Call",
                selectedValue={"apiDetails": {"endpointURL": "https://a.example/"}},
                timerConfigs={"delay_type": 328, "value": "{{node-1.when}}"},
                delayReady=True,
            ),
        )
    )
    assert [(s.id, s.kind) for s in spec.steps] == [
        ("node-2", "delay"),
        ("node-3-delay", "delay"),
        ("node-3", "api_call"),
    ]
    assert (spec.steps[0].mode, spec.steps[0].amount, spec.steps[0].unit) == ("for", 3, "hours")
    assert (spec.steps[1].mode, spec.steps[1].until) == ("until", "{{node-1.when}}")


@pytest.mark.parametrize(
    ("timer", "message"),
    [
        ({}, "Please fill the values of mandatory fields before Testing"),
        ({"delay_type": 515, "delay_unit": 514, "delay_value": "ten"}, "Please Fill Integer Only"),
        ({"delay_type": 515, "delay_unit": 999, "delay_value": "1"}, "Unknown delay unit"),
        ({"delay_type": 1, "delay_unit": 514, "delay_value": "1"}, "Unknown delay type"),
    ],
)
def test_a_bad_delay_names_the_node(timer, message):
    with pytest.raises(CompileError, match=r"^Delay \(node-2\): " + message):
        compile_(chain(webhook(), delay_node("node-2", 2, **timer), api_node("node-3", 3)))


def _slack_node(**data: Any) -> dict[str, Any]:
    n = node(
        "node-2",
        "ActionNode",
        "slack",
        2,
        "Slack",
        selectedEvent={"id": "send_message", "name": "Send Channel Message"},
        selectedAccount={"id": 12, "name": "Work"},
        configResponses=[
            {"config_key": "channel", "value": "C012AB3CD"},
            {"config_key": "text", "value": "New order {{node-1.id}}"},
            {"config_key": "thread_ts", "value": ""},
        ],
    )
    n["data"]["app_detail"]["id"] = 105
    n["data"].update(data)
    return n


def test_catalogue_app_nodes_become_app_event_steps():
    step = compile_(chain(webhook(), _slack_node())).steps[-1]
    assert step.kind == "app_event" and (step.app_id, step.event, step.account_id) == (105, "send_message", 12)
    assert [(f.key, f.value) for f in step.fields] == [("channel", "C012AB3CD"), ("text", "New order {{node-1.id}}")]


@pytest.mark.parametrize(
    ("data", "message"),
    [({"selectedAccount": None}, "choose an account"), ({"selectedEvent": {"id": "nope"}}, "choose an event")],
)
def test_catalogue_app_nodes_need_event_and_account(data, message):
    with pytest.raises(CompileError, match=r"Slack \(node-2\): " + message):
        compile_(chain(webhook(), _slack_node(**data)))


def _slack_trigger(**data: Any) -> dict[str, Any]:
    n = node(
        "node-1",
        "TriggerNode",
        "slack",
        1,
        "Slack",
        selectedEvent={"id": "new_message", "name": "New Message Posted to Channel"},
        selectedAccount={"id": "12", "name": "Work"},
        configResponses=[{"config_key": "channel", "value": {"label": "#general", "value": "C012AB3CD"}}],
    )
    n["data"]["app_detail"]["id"] = 105
    n["data"].update(data)
    return n


def test_catalogue_polling_triggers_compile_to_the_runners_polling_trigger():
    spec = compile_(chain(_slack_trigger(), api_node("node-2", 2, body=[{"key": "t", "value": "{{node-1.text}}"}])))
    t = spec.trigger
    assert t.kind == "polling" and (t.app, t.event, t.app_id, t.account_id) == ("slack", "new_message", 105, 12)
    assert t.url is None and [(f.key, f.value) for f in t.event_fields] == [("channel", "C012AB3CD")]
    # The manifest's strategy: dedupe by timestamp on ts, Slack's `oldest` as a unix time, every minute.
    assert (t.dedupe, t.id_path, t.timestamp_path, t.since_param, t.since_format) == (
        "timestamp", "ts", "ts", "oldest", "unix",
    )  # fmt: skip
    assert (t.items_path, t.interval_seconds) == ("messages", 60)
    assert "token" not in spec.model_dump_json().lower()  # credentials are fetched at poll time, never in the spec


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"selectedAccount": None}, "choose an account"),
        ({"selectedEvent": {"id": "send_message"}}, "choose a trigger event"),
        ({"selectedEvent": {"id": "nope"}}, "choose a trigger event"),
    ],
)
def test_catalogue_triggers_need_a_trigger_event_and_an_account(data, message):
    with pytest.raises(CompileError, match=r"Slack \(node-1\): " + message):
        compile_(chain(_slack_trigger(**data), api_node("node-2", 2)))


def test_a_nodes_on_error_card_compiles_to_its_steps_error_policy():
    api = node(
        "node-2",
        "Api",
        "api",
        2,
        "API Call",
        selectedValue={"apiDetails": {"endpointURL": "https://a.example/"}},
        timerConfigs={"delay_type": 328, "value": "{{node-1.when}}"},
        delayReady=True,
        onError={"retries": 3, "backoff": "fixed", "delaySeconds": 5, "retryOn": ["server", "rate_limited"]},
    )
    plain = api_node("node-3", 3)
    spec = compile_(chain(webhook(), api, plain))
    delay, call, other = spec.steps
    assert delay.id == "node-2-delay" and delay.on_error is None  # the Set Delay before it: not retried
    assert call.on_error is not None and call.on_error.retry is not None
    assert (call.on_error.retry.attempts, call.on_error.retry.backoff, call.on_error.retry.delay_seconds) == (
        3,
        "fixed",
        5,
    )
    assert call.on_error.retry.on == ["server", "rate_limited"] and not call.on_error.continue_run
    assert other.on_error is None
    # A policy that asks for nothing is none; continue on error alone is one.
    spec = compile_(
        chain(webhook(), api_node("node-2", 2) | {"data": {**api_node("node-2", 2)["data"], "onError": {}}})
    )
    assert spec.steps[0].on_error is None
    cont = api_node("node-2", 2)
    cont["data"]["onError"] = {"continueOnError": True}
    step = compile_(chain(webhook(), cont)).steps[0]
    assert step.on_error is not None and step.on_error.continue_run and step.on_error.retry is None
    # The spec dumps it (the Konnect resource carries it); a step without one dumps as before.
    assert "on_error" in step.model_dump() and "on_error" not in other.model_dump()


@pytest.mark.parametrize(
    ("on_error", "message"),
    [
        ({"retries": 11}, "retries"),
        ({"retries": 2, "retryOn": []}, "On error: Retry on: choose at least one kind of failure to retry"),
        ({"retries": 2, "retryOn": ["teapot"]}, "retryOn"),
        ({"retries": 2, "delaySeconds": 301}, "delaySeconds"),
    ],
)
def test_a_bad_on_error_card_is_a_compile_error_that_names_the_node(on_error, message):
    bad = api_node("node-2", 2)
    bad["data"]["onError"] = on_error
    with pytest.raises(CompileError, match=message) as caught:
        compile_(chain(webhook(), bad))
    assert "node-2" in str(caught.value)
