"""Schemathesis over the flow, folder, history, dashboard and task-log calls: whatever the input
(huge ids, NUL characters, wildcards, wrong types, missing fields), the answer is never a 5xx."""

from __future__ import annotations

import re

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

PATHS = re.compile(r"^/api/v1/(folders|konnects|dashboard|task_logs)(/|$)")
SKIP = re.compile(r"(save|publish)_konnect$")  # canvas documents: covered by test_konnects


def _operations(client):
    schema = schemathesis.openapi.from_dict(client.app.openapi())
    ops = []
    for result in schema.get_all_operations():
        op = result.ok()
        if PATHS.match(op.path) and not SKIP.search(op.path):
            ops.append(op)
    return ops


@pytest.fixture(scope="module")
def fuzz_headers(client, smtp_sink):
    from .conftest import login, signup_and_verify

    return login(client, signup_and_verify(client, smtp_sink))


def test_no_server_errors(client, fuzz_headers):
    ops = _operations(client)
    assert len(ops) >= 12, [op.path for op in ops]
    seen: set[int] = set()
    for op in ops:

        @given(case=op.as_strategy())
        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case):
            kwargs = case.as_transport_kwargs(base_url="http://testserver", headers=fuzz_headers)
            kwargs.pop("verify", None)
            if not kwargs.get("cookies"):
                kwargs.pop("cookies", None)
            response = client.request(**kwargs)
            seen.add(response.status_code)
            assert response.status_code < 500, (case.method, case.formatted_path, response.status_code, response.text)

        check()
    # The generated input reached both the handlers and the validation.
    assert {200, 422} <= seen, seen
