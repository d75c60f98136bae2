"""An OAuth2 app's second method (``auth.token_method``): a pasted token under the credential names the
app's injections already read, so the same requests serve both kinds of account."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from konnectz_contracts.manifest import App
from konnectz_runner.apps import build_test_request, load_catalogue, secret_values

TOKEN_METHOD = {
    "label": "Personal access token",
    "fields": [{"key": "access_token", "label": "Personal access token", "help": "Settings > Tokens"}],
}


def _app(auth: dict[str, Any]) -> App:
    return App.model_validate(
        {
            "id": 990001,
            "key": "tm",
            "name": "Token Method",
            "source": {"kind": "curated"},
            "base_url": "https://api.example.com",
            "auth": auth,
            "events": [{"key": "me", "kind": "search", "label": "Me", "operation": {"method": "GET", "path": "/me"}}],
        }
    )


OAUTH = {
    "type": "oauth2",
    "oauth2": {"authorization_url": "https://example.com/a", "token_url": "https://example.com/t"},
    "inject": [{"location": "header", "name": "Authorization", "value": "Bearer {{auth.access_token}}"}],
    "test": {"path": "/me"},
}


def test_a_pasted_token_is_injected_as_the_oauth_token_and_kept_secret() -> None:
    app = _app({**OAUTH, "token_method": TOKEN_METHOD})
    assert app.auth.token_method is not None and app.auth.token_method.fields[0].label == "Personal Access Token"
    request = build_test_request(app, {"access_token": "ghp_secret"})
    assert request is not None and request.headers["Authorization"] == "Bearer ghp_secret"
    assert secret_values(app, {"access_token": "ghp_secret"}) == ["ghp_secret"]


def test_a_token_method_belongs_to_an_oauth2_app_with_unique_keys() -> None:
    bearer = {"type": "bearer", "fields": [{"key": "api_key"}], "inject": []}
    with pytest.raises(ValidationError, match="second method of an oauth2 app"):
        _app({**bearer, "token_method": TOKEN_METHOD})
    twice = {**TOKEN_METHOD, "fields": TOKEN_METHOD["fields"] * 2}
    with pytest.raises(ValidationError, match="token_method field keys must be unique"):
        _app({**OAUTH, "token_method": twice})
    with pytest.raises(ValidationError):
        _app({**OAUTH, "token_method": {"label": "Token", "fields": []}})


def test_the_curated_apps_offering_a_token_method() -> None:
    curated = {app.key: app for app in load_catalogue(include_generated=False) if app.source.kind == "curated"}
    with_token = sorted(key for key, app in curated.items() if app.auth.token_method is not None)
    assert with_token == [
        "airtable", "asana", "calendly", "github", "gitlab", "hubspot", "notion", "slack", "typeform",
    ]  # fmt: skip
    for key in with_token:
        method = curated[key].auth.token_method
        assert method is not None and [f.key for f in method.fields] == ["access_token"], key
