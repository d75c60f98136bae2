import pytest

from konnectz_contracts.errors import StepError
from konnectz_contracts.refs import build_json_body, lookup, resolve, resolve_value
from konnectz_contracts.spec import KeyValue

CONTEXT = {
    "node-1": {
        "customer": {"name": "Ada", "age": 36, "vip": True, "note": None},
        "items": [{"name": "pen", "qty": 2}, {"name": "ink", "qty": 1}],
        "tags": ["a", "b"],
    },
    "node-2": {"status": 200, "body": {"id": 7}},
}


def test_resolves_nested_paths_and_list_indexes() -> None:
    assert resolve("Hi {{node-1.customer.name}}!", CONTEXT) == "Hi Ada!"
    assert resolve("{{node-1.items.1.name}} x{{node-1.items.1.qty}}", CONTEXT) == "ink x1"
    assert resolve("id={{node-2.body.id}}", CONTEXT) == "id=7"


def test_whitespace_inside_braces_is_allowed() -> None:
    assert resolve("{{  node-1.customer.name }}", CONTEXT) == "Ada"


def test_non_string_values_render_as_json_text() -> None:
    assert resolve("{{node-1.customer.vip}}", CONTEXT) == "true"
    assert resolve("{{node-1.tags}}", CONTEXT) == '["a","b"]'
    assert resolve("[{{node-1.customer.note}}]", CONTEXT) == "[]"


def test_missing_paths_resolve_to_empty_and_warn() -> None:
    warnings: list[str] = []
    text = resolve("a{{node-1.customer.email}}b{{node-9.x}}c{{node-1.items.5.name}}", CONTEXT, warnings)
    assert text == "abc"
    assert warnings == [
        "Reference {{node-1.customer.email}} not found: used an empty value",
        "Reference {{node-9.x}} not found: used an empty value",
        "Reference {{node-1.items.5.name}} not found: used an empty value",
    ]


def test_indexing_a_dict_with_a_number_or_a_list_with_a_name_is_missing() -> None:
    with pytest.raises(KeyError):
        lookup("node-1.items.name", CONTEXT)
    with pytest.raises(KeyError):
        lookup("node-1.customer.0", CONTEXT)
    with pytest.raises(KeyError):
        lookup("node-1.items.-1", CONTEXT)


def test_text_without_references_is_unchanged() -> None:
    assert resolve("{ not a ref } {{}} {single}", CONTEXT) == "{ not a ref } {{}} {single}"


def test_nothing_is_evaluated() -> None:
    warnings: list[str] = []
    assert resolve("{{ node-1.__class__ }}{{ 7*7 }}{{ __import__('os') }}", CONTEXT, warnings) == ""
    assert len(warnings) == 3


def test_resolve_value_keeps_the_json_type_of_a_single_reference() -> None:
    assert resolve_value("{{node-1.customer.age}}", CONTEXT) == 36
    assert resolve_value(" {{ node-1.customer.vip }} ", CONTEXT) is True
    assert resolve_value("{{node-1.items.0}}", CONTEXT) == {"name": "pen", "qty": 2}
    assert resolve_value("{{node-1.customer.note}}", CONTEXT) is None
    assert resolve_value("age {{node-1.customer.age}}", CONTEXT) == "age 36"
    assert resolve_value("{{node-1.customer.age}}{{node-1.customer.age}}", CONTEXT) == "3636"
    assert resolve_value("plain", CONTEXT) == "plain"


def test_resolve_value_missing_is_empty_string_with_warning() -> None:
    warnings: list[str] = []
    assert resolve_value("{{node-1.nope}}", CONTEXT, warnings) == ""
    assert warnings


def test_body_with_dotted_keys_builds_nested_objects() -> None:
    pairs = [
        KeyValue(key="customer.name", value="{{node-1.customer.name}}"),
        KeyValue(key="customer.address.city", value="Paris"),
        KeyValue(key="customer.age", value="{{node-1.customer.age}}"),
        KeyValue(key="first_item", value="{{node-1.items.0}}"),
        KeyValue(key="count", value="3"),
    ]
    assert build_json_body(pairs, CONTEXT) == {
        "customer": {"name": "Ada", "address": {"city": "Paris"}, "age": 36},
        "first_item": {"name": "pen", "qty": 2},
        "count": "3",
    }


def test_body_wrap_in_array() -> None:
    pairs = [KeyValue(key="a.b", value="1")]
    assert build_json_body(pairs, CONTEXT, wrap_in_array=True) == [{"a": {"b": "1"}}]


def test_body_key_conflicts_are_step_errors() -> None:
    with pytest.raises(StepError, match="conflicts"):
        build_json_body([KeyValue(key="a", value="1"), KeyValue(key="a.b", value="2")], CONTEXT)
    with pytest.raises(StepError, match="conflicts"):
        build_json_body([KeyValue(key="a.b", value="1"), KeyValue(key="a", value="2")], CONTEXT)
    with pytest.raises(StepError, match="empty part"):
        build_json_body([KeyValue(key="a..b", value="1")], CONTEXT)


def test_body_missing_reference_warns() -> None:
    warnings: list[str] = []
    assert build_json_body([KeyValue(key="x", value="{{node-2.body.nope}}")], CONTEXT, warnings=warnings) == {"x": ""}
    assert warnings == ["Reference {{node-2.body.nope}} not found: used an empty value"]
