"""Iterator items and the data forwarder's object."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from konnectz_contracts.model import KeyValue
from konnectz_contracts.steps import data_forwarder as data_forwarder_config
from konnectz_contracts.steps import iterator as iterator_config
from konnectz_contracts.steps.iterator import MAX_ITEMS
from konnectz_runner.engine.steps import data_forwarder, iterator
from konnectz_runner.engine.steps.iterator import items_of

DATA = {"node-1": {"lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}], "tags": "x, y", "n": 5,
                   "customer": {"name": "Ada"}}}  # fmt: skip


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([{"a": 1}, 2, "x"], [{"a": 1}, {"value": 2}, {"value": "x"}]),
        ("a, b", [{"value": "a"}, {"value": "b"}]),
        ('[1, {"b": 2}]', [{"value": 1}, {"b": 2}]),
        ({"only": 1}, [{"only": 1}]),
        ("", []),
        (None, []),
        ([], []),
        (7, [{"value": 7}]),
    ],
)
def test_items_of(value: Any, expected: list[Any]) -> None:
    assert items_of(value, ",") == expected


async def test_iterator_outcome_carries_the_items(make_ctx: Any) -> None:
    outcome = await iterator.run(
        iterator_config.Config(id="node-2", name="Each", input="{{node-1.lines}}"), make_ctx(DATA)
    )
    assert outcome.items == DATA["node-1"]["lines"]
    assert outcome.output == {"count": 2, "items": DATA["node-1"]["lines"]}
    split = await iterator.run(
        iterator_config.Config(id="node-2", name="Each", input="{{node-1.tags}}"), make_ctx(DATA)
    )
    assert split.items == [{"value": "x"}, {"value": "y"}]


async def test_too_many_items_is_an_error(make_ctx: Any) -> None:
    data = {"node-1": {"many": list(range(MAX_ITEMS + 1))}}
    outcome = await iterator.run(
        iterator_config.Config(id="node-2", name="Each", input="{{node-1.many}}"), make_ctx(data)
    )
    assert outcome.status == "ERROR" and f"at most {MAX_ITEMS}" in (outcome.error or "")


async def test_forwarder_builds_an_object_keeping_types(make_ctx: Any) -> None:
    config = data_forwarder_config.Config(
        id="node-3",
        name="Forward",
        keys=[
            KeyValue(key="count", value="{{node-1.n}}"),
            KeyValue(key="who.name", value="{{node-1.customer.name}}"),
            KeyValue(key="note", value="Hi {{node-1.customer.name}}"),
            KeyValue(key="gone", value="{{node-1.nope}}"),
        ],
    )
    outcome = await data_forwarder.run(config, make_ctx(DATA))
    assert outcome.output == {"count": 5, "who": {"name": "Ada"}, "note": "Hi Ada", "gone": ""}
    assert outcome.input["keys"] == ["count", "who.name", "note", "gone"]
    assert "not found" in outcome.input["warnings"][0]
    clash = config.model_copy(update={"keys": [KeyValue(key="a", value="1"), KeyValue(key="a.b", value="2")]})
    assert (await data_forwarder.run(clash, make_ctx(DATA))).status == "ERROR"
    with pytest.raises(ValidationError):
        data_forwarder_config.Config(id="n", name="F", keys=[])
