"""konnectz_api.core.jsontext: orjson's encoding, without its refusal of integers beyond 64 bits."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import orjson
import pytest

from konnectz_api.core.jsontext import dumps, dumps_text


def test_plain_values_are_orjsons_own_encoding() -> None:
    value = {"a": [1, 2.5, None, True], "b": {"c": "d\u00e9"}, 3: "x", "n": 2**63 - 1, "m": -(2**63)}
    assert dumps(value, orjson.OPT_NON_STR_KEYS) == orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    assert dumps_text(value) == orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert dumps({"at": at}, orjson.OPT_UTC_Z) == b'{"at":"2026-01-02T03:04:05Z"}'


def test_integers_beyond_64_bits_become_floats_everywhere_in_the_value() -> None:
    with pytest.raises(TypeError):
        orjson.dumps({"n": 2**70})  # what failed before
    value = {"n": 2**70, "list": [1, -(2**65), (2**64,)], "deep": {"k": [{"x": 2**100}]}, "ok": 2**64 - 1}
    assert json.loads(dumps(value)) == {
        "n": float(2**70),
        "list": [1, float(-(2**65)), [float(2**64)]],
        "deep": {"k": [{"x": float(2**100)}]},
        "ok": 2**64 - 1,  # still an integer: orjson encodes up to 2**64 - 1
    }
    assert json.loads(dumps_text({2**70: "key"})) == {str(float(2**70)): "key"}
    assert json.loads(dumps([True, False, 2**70])) == [True, False, float(2**70)]  # booleans stay booleans


def test_an_integer_too_large_for_a_float_becomes_its_digits() -> None:
    assert json.loads(dumps({"n": 10**400})) == {"n": "1" + "0" * 400}


def test_other_values_orjson_refuses_are_still_refused() -> None:
    with pytest.raises(TypeError):
        dumps({"s": {1, 2}})
    with pytest.raises(TypeError):
        dumps({"s": {1, 2}, "n": 2**70})
