"""The contract tells the truth: schemathesis over the whole OpenAPI document, with valid and invalid
input, signed in as a user with data of their own. Every answer must be a status the operation
documents (``status_code_conformance``), its body must match the documented schema
(``response_schema_conformance``), and no answer is a 5xx."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance]
#: Examples per operation and generation mode (``KONNECTZ_CONTRACT_EXAMPLES`` for a longer run).
EXAMPLES = int(os.environ.get("KONNECTZ_CONTRACT_EXAMPLES", "10"))
#: Calls that end the session of the token they carry: sent with a token of their own.
SESSION_ENDING = {"/api/v1/users/logout", "/api/v1/users/change_password"}


def _operations(client):
    schema = schemathesis.openapi.from_dict(client.app.openapi())
    return [result.ok() for result in schema.get_all_operations()]


@pytest.fixture(scope="module")
def contract_user(client, smtp_sink):
    from .conftest import login, signup_and_verify, webhook_canvas

    email = signup_and_verify(client, smtp_sink)
    headers = login(client, email)
    canvas = webhook_canvas()
    r = client.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": canvas["apps"][0]["id"], "konnect_id": None, "canvas_json": canvas},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    client.post("/api/v1/folders/add", json={"folder_name": "Contract"}, headers=headers)
    return email, headers


def _httpx_file(part):
    """A multipart part as httpx takes it: generated values that are not text or bytes become text."""
    name, (filename, content, *rest) = part
    if not isinstance(content, str | bytes):
        content = json.dumps(content)
    return (name, (filename, content, *rest))


def _check(client, op, mode, headers, fresh_headers, statuses):
    @given(case=op.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def check(case):
        auth = fresh_headers() if op.path in SESSION_ENDING else headers
        kwargs = case.as_transport_kwargs(base_url="http://testserver", headers=auth)
        kwargs.pop("verify", None)
        if not kwargs.get("cookies"):
            kwargs.pop("cookies", None)
        if kwargs.get("files"):
            kwargs["files"] = [_httpx_file(part) for part in kwargs["files"]]
        response = client.request(**kwargs)
        response.request.read()  # a multipart body is streamed: read it for the report
        statuses[response.status_code] += 1
        case.validate_response(response, checks=CHECKS)

    check()


def test_every_operation_answers_what_the_document_says(client, contract_user):
    from .conftest import login

    email, headers = contract_user
    ops = _operations(client)
    assert len(ops) >= 60, len(ops)
    failures: dict[str, str] = {}
    statuses: Counter[int] = Counter()
    for op in ops:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                _check(client, op, mode, headers, lambda: login(client, email), statuses)
            except Unsatisfiable:
                assert mode == GenerationMode.NEGATIVE, op.path  # nothing invalid to send (no parameters)
            except (Exception, BaseExceptionGroup) as exc:  # every failing operation is listed at the end
                lines = [line for line in str(exc).strip().splitlines() if line.strip()]
                failures[f"{op.method.upper()} {op.path} ({mode.value})"] = " | ".join(lines[:6])[:600]
    assert failures == {}, "\n".join(f"{k}: {v}" for k, v in sorted(failures.items()))
    assert {200, 401, 404, 422} <= set(statuses), statuses


def test_a_routes_own_refusals_are_documented(client, api):
    """The random examples above seldom reach the refusals a route gives for its own reasons (a member
    that is not yours, an app that does not use OAuth2): these calls do, and their replies go through
    the same checks, so a status the document lacks fails here."""
    from sqlalchemy import update

    from konnectz_api.catalogue import get_index
    from konnectz_api.crud import quota
    from konnectz_api.db import get_sessionmaker
    from konnectz_api.models import User

    email = api.signup_and_verify()
    with get_sessionmaker()() as session:
        quota.set_plan(session, email=email, plan="Team")
        session.execute(update(User).where(User.email == email).values(is_admin=True))
        session.commit()
    headers = api.login(email)
    index = get_index()
    not_oauth = next(e.id for e in index.listings["all"] if getattr(index.get(e.id), "auth", None) is not None
                     and index.get(e.id).auth.type != "oauth2")  # fmt: skip
    nobody = 2**62  # a member id that is nobody's
    calls = [
        ("POST", "/api/v1/members/update_team_user", {"body": {"sub_account_id": nobody, "first_name": "X"}}, 404),
        ("GET", "/api/v1/members/remove_team_user", {"query": {"sub_account_id": nobody}}, 404),
        ("GET", "/api/v1/apps/{app_id}/oauth_client", {"path_parameters": {"app_id": not_oauth}}, 400),
        ("DELETE", "/api/v1/admin/oauth_clients/{app_id}", {"path_parameters": {"app_id": not_oauth}}, 400),
    ]
    schema = schemathesis.openapi.from_dict(client.app.openapi())
    failures: dict[str, str] = {}
    for method, path, parts, status in calls:
        case = schema[path][method].Case(**parts)
        kwargs = case.as_transport_kwargs(base_url="http://testserver", headers=headers)
        kwargs.pop("verify", None)
        if not kwargs.get("cookies"):
            kwargs.pop("cookies", None)
        response = client.request(**kwargs)
        assert response.status_code == status, f"{method} {path}: {response.status_code} {response.text}"
        try:
            case.validate_response(response, checks=CHECKS)
        except (Exception, BaseExceptionGroup) as exc:
            failures[f"{method} {path}"] = " | ".join(line for line in str(exc).splitlines() if line.strip())[:300]
    assert failures == {}, "\n".join(f"{k}: {v}" for k, v in sorted(failures.items()))
