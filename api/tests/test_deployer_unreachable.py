"""A Kubernetes API server that cannot be reached is a DeployError (a 503 for the user), never a 500."""

from __future__ import annotations

import asyncio
import socket

import pytest
from kubernetes import client

from konnectz_api.services.deployer import DeployError, KubernetesDeployer
from konnectz_contracts.spec import FlowSpec


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_api_server_is_a_deploy_error():
    conf = client.Configuration(host=f"http://127.0.0.1:{_closed_port()}")
    conf.retries = 0
    deployer = KubernetesDeployer("konnectz", api_client=client.ApiClient(conf))
    flow = FlowSpec.model_validate(
        {
            "version": 1,
            "konnect_id": 5,
            "owner_id": 1,
            "name": "x",
            "trigger_id": "n1",
            "trigger": {"kind": "webhook", "token": "whk_" + "a" * 32},
            "steps": [{"kind": "api_call", "id": "n2", "name": "Call", "method": "GET", "url": "https://example.com/"}],
        }
    )
    with pytest.raises(DeployError, match="could not be reached to publish the konnect"):
        asyncio.run(deployer.publish(flow))
    with pytest.raises(DeployError, match="could not be reached to delete the konnect"):
        asyncio.run(deployer.unpublish(5))
