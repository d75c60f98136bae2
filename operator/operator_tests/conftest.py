from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from konnectz_operator.config import OperatorSettings

TOKEN = "tok_" + "a1b2c3d4" * 5


def make_flow(*, konnect_id: int = 42, owner_id: int = 7, trigger: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "version": 1,
        "konnect_id": konnect_id,
        "owner_id": owner_id,
        "name": "Order to CRM",
        "timezone": "UTC",
        "trigger_id": "node-1",
        "trigger": trigger if trigger is not None else {"kind": "webhook", "token": TOKEN},
        "steps": [
            {
                "kind": "api_call",
                "id": "node-2",
                "name": "Create contact",
                "method": "POST",
                "url": "https://crm.example.com/api/contacts",
                "headers": [{"key": "X-Source", "value": "konnectz", "secret": False}],
                "params": [],
                "body": [{"key": "customer.name", "value": "{{node-1.body.name}} ünïcode", "secret": False}],
                "payload_type": "JSON",
                "wrap_in_array": False,
            }
        ],
    }


def in_spec(flow: dict[str, Any]) -> dict[str, Any]:
    """The flow as spec.flow holds it: no ids, no token (konnectz_contracts.resource.resource_flow)."""
    out = {k: v for k, v in flow.items() if k not in ("konnect_id", "owner_id")}
    out["trigger"] = {k: v for k, v in (flow.get("trigger") or {}).items() if k != "token"}
    return out


def make_konnect(
    name: str = "konnect-42",
    namespace: str = "team-a",
    *,
    trigger: dict[str, Any] | None = None,
    flow: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    trig = dict(trigger if trigger is not None else {"kind": "webhook"})
    if trig["kind"] in ("webhook", "form"):
        trig.setdefault("tokenSecret", f"{name}-trigger")
    if flow is None:
        flow_trigger = {"kind": "webhook", "token": TOKEN} if trig["kind"] == "webhook" else {"kind": "schedule"}
        flow = make_flow(trigger=flow_trigger)
    flow = in_spec(flow)
    return {
        "apiVersion": "konnectz.io/v1alpha1",
        "kind": "Konnect",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": "0b5e7c9e-1111-2222-3333-444455556666",
            "resourceVersion": "1001",
            "generation": 3,
            "labels": {"konnectz.io/owner-id": "7"},
        },
        "spec": {
            "konnectId": 42,
            "ownerId": 7,
            "displayName": "Order to CRM",
            "paused": False,
            "runnerMode": "dedicated",
            "trigger": trig,
            "flow": flow,
            **spec,
        },
    }


@pytest.fixture
def settings() -> OperatorSettings:
    return OperatorSettings(
        runner_image="registry.example.com/konnectz-runner:1.2.3",
        nats_url="nats://nats.konnectz:4222",
        webhook_base_url="",
    )


@pytest.fixture
def konnect() -> Callable[..., dict[str, Any]]:
    def factory(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return copy.deepcopy(make_konnect(*args, **kwargs))

    return factory


@pytest.fixture
def token() -> str:
    return TOKEN


@pytest.fixture
def flow() -> Callable[..., dict[str, Any]]:
    def factory(**kwargs: Any) -> dict[str, Any]:
        return copy.deepcopy(make_flow(**kwargs))

    return factory
