import copy

import pytest

from konnectz_api.compile import CompileError, app_names, compile_flow


def canvas():
    return {
        "apps": [
            {"id": "node-1", "data": {"app_detail": {"name": "Webhook", "provider": "webhook", "app_index": 1}}},
            {
                "id": "node-3",
                "data": {
                    "app_detail": {"name": "Second", "provider": "api", "app_index": 3},
                    "selectedValue": {"apiDetails": {"endpointURL": "https://b.example/x", "method": "get"}},
                },
            },
            {
                "id": "node-2",
                "data": {
                    "app_detail": {"name": "First", "provider": "api", "app_index": 2},
                    "selectedValue": {
                        "wrap_in_array": "YES",
                        "payload_type": "JSON",
                        "apiDetails": {
                            "endpointURL": "https://a.example/y",
                            "headers": [{"key": "A", "value": "1"}, {"key": "", "value": ""}],
                            "body": [{"key": "x", "value": "{{node-1.v}}"}],
                        },
                    },
                },
            },
        ],
        "links": [],
        "dataForSelect": {},
    }


def compile_(c):
    return compile_flow(c, konnect_id=7, owner_id=3, name="n", webhook_token="t" * 43)


def test_steps_follow_app_index_and_carry_their_config():
    spec = compile_(canvas())
    assert [s.id for s in spec.steps] == ["node-2", "node-3"]
    first, second = spec.steps
    assert first.method == "POST" and first.wrap_in_array is True
    assert [(h.key, h.value) for h in first.headers] == [("A", "1")]  # blank rows dropped
    assert first.body[0].value == "{{node-1.v}}"
    assert second.method == "GET"
    assert spec.trigger_id == "node-1" and spec.trigger.token == "t" * 43


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c: c["apps"].pop(0), "Trigger not chosen"),
        (lambda c: c.update(apps=[c["apps"][0]]), "Add at least one action"),
        (
            lambda c: c["apps"][2]["data"]["selectedValue"]["apiDetails"].update(endpointURL="ftp://x"),
            "must start with http:// or https://",
        ),
        (lambda c: c["apps"][2]["data"]["selectedValue"]["apiDetails"].update(method="TRACE"), "unsupported method"),
        (lambda c: c["apps"][2]["data"]["selectedValue"].update(payload_type="XML"), "Payload Type must be JSON"),
        (
            lambda c: c["apps"][2]["data"]["selectedValue"]["apiDetails"].update(headers=[{"key": "", "value": "v"}]),
            "has a value but no key",
        ),
        (lambda c: c["apps"][1].update(id="node-2"), "node ids must be unique"),
        (lambda c: c["apps"][1]["data"]["app_detail"].update(provider="slack"), "cannot run yet"),
        (lambda c: c.update(apps="x"), "must be a list"),
    ],
)
def test_invalid_canvases_name_the_problem(mutate, message):
    c = copy.deepcopy(canvas())
    mutate(c)
    with pytest.raises(CompileError, match=message):
        compile_(c)


def test_app_names_for_lists():
    assert app_names(canvas()) == ("Webhook", ["First", "Second"])
    assert app_names({"apps": "broken"}) == (None, [])


def _slack_node(**data):
    return {
        "id": "node-4",
        "data": {
            "app_detail": {"id": 105, "name": "Slack", "provider": "slack", "app_index": 4},
            "selectedEvent": {"id": "send_message", "name": "Send Channel Message"},
            "selectedAccount": {"id": 12, "name": "Work"},
            "configResponses": [
                {"config_key": "channel", "value": "C012AB3CD"},
                {"config_key": "text", "value": "New order {{node-1.id}}"},
                {"config_key": "thread_ts", "value": ""},
            ],
            **data,
        },
    }


def test_catalogue_app_nodes_become_app_event_steps():
    c = canvas()
    c["apps"].append(_slack_node())
    step = compile_(c).steps[-1]
    assert step.kind == "app_event" and (step.app_id, step.event, step.account_id) == (105, "send_message", 12)
    assert [(f.key, f.value) for f in step.fields] == [("channel", "C012AB3CD"), ("text", "New order {{node-1.id}}")]


@pytest.mark.parametrize(
    ("data", "message"),
    [({"selectedAccount": None}, "choose an account"), ({"selectedEvent": {"id": "nope"}}, "choose an event")],
)
def test_catalogue_app_nodes_need_event_and_account(data, message):
    c = canvas()
    c["apps"].append(_slack_node(**data))
    with pytest.raises(CompileError, match=message):
        compile_(c)
