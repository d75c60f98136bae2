"""The registry keeps webhook konnects as their JSON (parsed when used) and the others parsed."""

from __future__ import annotations

import json

import pytest

from konnectz_contracts.errors import ConfigError
from konnectz_contracts.spec import ApiCallStep, FlowSpec, ScheduleTrigger, WebhookTrigger
from konnectz_runner.bus import KonnectRegistry, load_spec_file
from konnectz_runner.bus.registry import KV_DEL, apply_entry


def _webhook(konnect_id: int, url: str = "http://service.test/x") -> FlowSpec:
    return FlowSpec(
        konnect_id=konnect_id,
        owner_id=1,
        name=f"K{konnect_id}",
        trigger_id="node-1",
        trigger=WebhookTrigger(token=f"tok{konnect_id:021d}"),
        steps=[ApiCallStep(id="node-2", name="S", url=url)],
    )


def _schedule(konnect_id: int) -> FlowSpec:
    return _webhook(konnect_id).model_copy(
        update={
            "trigger": ScheduleTrigger.model_validate(
                {"schedule": {"schedule_type": "Everyday", "schedule_time": "09:00"}}
            )
        }
    )


def test_webhooks_are_kept_as_json_and_served_parsed() -> None:
    registry = KonnectRegistry()
    hook, timer = _webhook(1), _schedule(2)
    apply_entry(registry, "konnect.1", hook.model_dump_json().encode(), None)
    apply_entry(registry, "konnect.2", timer.model_dump_json().encode(), None)
    assert len(registry) == 2
    assert isinstance(registry._by_id[1], bytes)  # the JSON, not the parsed object
    assert registry.by_id(1) == hook and registry.by_token(hook.trigger.token) == hook  # type: ignore[union-attr]
    assert registry.specs() == [timer]  # what the scheduler and the poller walk
    # Republished with other content: the new version is served, not a cached parse of the old one.
    changed = _webhook(1, url="http://service.test/changed")
    apply_entry(registry, "konnect.1", changed.model_dump_json().encode(), None)
    assert registry.by_token(hook.trigger.token) == changed  # type: ignore[union-attr]
    # Unpublished: gone by id and by token.
    apply_entry(registry, "konnect.1", None, KV_DEL)
    assert registry.by_id(1) is None and registry.by_token(hook.trigger.token) is None  # type: ignore[union-attr]
    assert len(registry) == 1


def test_a_full_load_replaces_everything() -> None:
    registry, initial = KonnectRegistry(), KonnectRegistry()
    registry.put(_webhook(9))
    initial.put(_webhook(1), raw=_webhook(1).model_dump_json().encode())
    initial.put(_schedule(2))
    registry.replace_all(initial)
    assert registry.by_id(9) is None and registry.by_id(1) == _webhook(1) and registry.specs() == [_schedule(2)]


def test_a_spec_file_without_its_token_gets_the_one_from_the_secret(tmp_path):
    """Kubernetes: the operator's ConfigMap has no URL token; the runner has it from the Konnect's
    Secret (KONNECTZ_TRIGGER_TOKEN) and serves /hooks/<that token>."""
    token = "whk_" + "5" * 24
    flow = {
        "konnect_id": 9,
        "owner_id": 1,
        "name": "Hook",
        "trigger_id": "node-1",
        "trigger": {"kind": "webhook"},
        "steps": [{"kind": "api_call", "id": "node-2", "name": "Call", "url": "https://example.com"}],
    }
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(flow))
    assert load_spec_file(path, token).trigger.token == token
    with pytest.raises(ConfigError, match="not a valid flow spec"):
        load_spec_file(path)  # no token anywhere: refused at start, with the file named
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="not JSON"):
        load_spec_file(path, token)


def test_a_pool_runner_binds_its_broker_tokens_to_the_uid_the_operator_handed_over() -> None:
    """The operator puts each pool flow into KZ_KONNECTS with its Konnect's uid (``resource_uid``, never
    in the api's dumps): the pool derives the konnect's broker token from the key and that uid."""
    from konnectz_contracts.broker_token import konnect_token, token_for

    env = {"KONNECTZ_CREDENTIALS_KEY": "key"}
    flow = json.loads(_webhook(31).model_dump_json())
    assert "resource_uid" not in flow
    registry = KonnectRegistry()
    apply_entry(registry, "konnect.31", json.dumps({**flow, "resource_uid": "uid-31"}).encode(), None)
    assert registry.by_id(31) is not None and registry.by_id(31).resource_uid == "uid-31"  # type: ignore[union-attr]
    assert token_for(31, env) == konnect_token("key", 31, "uid-31")
    apply_entry(registry, "konnect.31", b"", KV_DEL)  # withdrawn: forgotten
    assert token_for(31, env) == konnect_token("key", 31, "")
