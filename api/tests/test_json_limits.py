"""Every JSON body of the api has the same size and depth limits, whatever the route (real api).

Hostile bodies get a 400 or 413 that says why, never a 500: nesting beyond
``konnectz_contracts.limits.API_MAX_JSON_DEPTH`` (Test & Review with ``canvas_json.dataForSelect``
nested 400 deep answered 500, and any body nested about 1,000 deep raised RecursionError), lone
surrogates, in any letter case of the JSON content type and without one.
"""

import json

import pytest

from konnectz_contracts.limits import API_MAX_JSON_DEPTH


def nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def nested_text(depth: int) -> str:
    """JSON text nested ``depth`` deep (json.dumps itself cannot write that deep)."""
    return '{"a":' * (depth - 1) + '{"leaf":1}' + "}" * (depth - 1)


def _post(client, path, payload_text, headers, content_type="application/json"):
    extra = {"Content-Type": content_type} if content_type else {}
    return client.post(path, content=payload_text.encode(), headers={**headers, **extra})


def test_test_and_review_with_deep_sample_data_is_a_400_not_a_500(client, api):
    headers = api.new_user()
    canvas = api.canvas()
    ok = {"node_id": canvas["apps"][0]["id"], "konnect_id": None, "canvas_json": canvas}
    canvas["dataForSelect"] = {"node-1": nested(API_MAX_JSON_DEPTH - 10)}  # deep, but within the limit
    assert client.post("/api/v1/konnects/test_and_review", json=ok, headers=headers).status_code == 200

    for depth in (400, 1000, 5000):
        canvas["dataForSelect"] = {"node-1": "DEEP"}
        text = json.dumps(ok).replace('"DEEP"', nested_text(depth))
        reply = _post(client, "/api/v1/konnects/test_and_review", text, headers)
        assert reply.status_code == 400, (depth, reply.text[:200])
        assert reply.json() == {"message": f"The JSON body is nested deeper than {API_MAX_JSON_DEPTH} levels"}


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/JSON", "Application/Json; charset=utf-8", ""]
)
def test_every_json_body_has_the_depth_and_character_limits(client, api, content_type):
    headers = api.new_user()
    deep = '{"folder_name": "x", "extra": ' + nested_text(2000) + "}"
    reply = _post(client, "/api/v1/folders/add", deep, headers, content_type)
    assert reply.status_code == 400 and "nested deeper than" in reply.json()["message"]

    surrogate = '{"folder_name": "\\ud800"}'
    reply = _post(client, "/api/v1/folders/add", surrogate, headers, content_type)
    assert reply.status_code == 400 and "lone UTF-16 surrogate" in reply.json()["message"]

    # A surrogate pair is a character (an emoji): accepted; so is a bracket inside a string.
    fine = '{"folder_name": "Ok \\ud83d\\ude00 {[{[", "unused": [[[]]]}'
    # (without a content type FastAPI does not read the body: a 422 for the missing field, no 500)
    assert _post(client, "/api/v1/folders/add", fine, headers, content_type).status_code == (
        200 if content_type else 422
    )


def test_a_body_above_the_size_limit_is_a_413(client, api):
    headers = api.new_user()
    reply = _post(client, "/api/v1/folders/add", json.dumps({"folder_name": "x" * (3 * 1024 * 1024)}), headers)
    assert reply.status_code == 413 and "larger than" in reply.json()["message"]
