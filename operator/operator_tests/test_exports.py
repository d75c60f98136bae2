from __future__ import annotations

import pytest
from pydantic import ValidationError

import konnectz_operator
from konnectz_operator import apply, config, errors, render, status, validation
from konnectz_operator.config import OperatorSettings


@pytest.mark.parametrize("module", [konnectz_operator, apply, config, errors, render, status, validation])
def test_all_names_exist_and_are_sorted(module):
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), f"{module.__name__}.{name}"


def test_settings_come_from_konnectz_env(monkeypatch):
    monkeypatch.setenv("KONNECTZ_RUNNER_IMAGE", "example.com/runner:9")
    monkeypatch.setenv("KONNECTZ_RUNNER_ENV", '{"KONNECTZ_API_URL": "http://api"}')
    monkeypatch.setenv("KONNECTZ_WEBHOOK_BASE_URL", "https://hooks.example.com/")
    settings = OperatorSettings()
    assert settings.runner_image == "example.com/runner:9"
    assert settings.runner_env == {"KONNECTZ_API_URL": "http://api"}
    assert settings.webhook_base_url == "https://hooks.example.com"


def test_watch_timeouts_must_let_the_server_end_the_watch():
    with pytest.raises(ValidationError, match="watch_client_timeout"):
        OperatorSettings(watch_server_timeout=300, watch_client_timeout=300)
