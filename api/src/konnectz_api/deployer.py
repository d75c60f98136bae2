"""Publishing hands a compiled FlowSpec to a deployer.

- ``LocalDeployer`` puts it into the ``KZ_KONNECTS`` JetStream KV bucket; local runners watch
  the bucket and serve the konnect without a restart.
- ``KubernetesDeployer`` creates or patches the ``Konnect`` custom resource; the operator turns
  it into runner workloads.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from konnectz_api.bus import Bus
from konnectz_runner.events import KV_KONNECTS, konnect_key
from konnectz_runner.resource import GROUP, PLURAL, VERSION, konnect_name, konnect_resource
from konnectz_runner.spec import FlowSpec

__all__ = ["DeployError", "Deployer", "KubernetesDeployer", "LocalDeployer", "konnect_resource"]


class DeployError(RuntimeError):
    pass


class Deployer(Protocol):
    async def publish(self, spec: FlowSpec) -> None: ...

    async def unpublish(self, konnect_id: int) -> None: ...


class LocalDeployer:
    def __init__(self, bus: Bus) -> None:
        self.bus = bus

    async def publish(self, spec: FlowSpec) -> None:
        try:
            kv = await self.bus.js.key_value(KV_KONNECTS)
            await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
        except Exception as exc:
            raise DeployError(f"could not hand the konnect to the runners: {exc}") from exc

    async def unpublish(self, konnect_id: int) -> None:
        try:
            kv = await self.bus.js.key_value(KV_KONNECTS)
            await kv.delete(konnect_key(konnect_id))
        except Exception as exc:
            raise DeployError(f"could not withdraw the konnect from the runners: {exc}") from exc


class KubernetesDeployer:
    def __init__(self, namespace: str) -> None:
        from kubernetes import client, config

        try:
            config.load_incluster_config()
        except config.ConfigException:
            config.load_kube_config()
        self._api = client.CustomObjectsApi()
        self.namespace = namespace

    def _apply(self, body: dict[str, Any]) -> None:
        from kubernetes.client.exceptions import ApiException

        name = body["metadata"]["name"]
        try:
            self._api.create_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, body)
        except ApiException as exc:
            if exc.status != 409:
                raise DeployError(f"Kubernetes refused the Konnect: {exc.reason}: {exc.body}") from exc
            self._api.patch_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, name, {"spec": body["spec"]}
            )

    async def publish(self, spec: FlowSpec) -> None:
        await asyncio.to_thread(self._apply, konnect_resource(spec, self.namespace))

    async def unpublish(self, konnect_id: int) -> None:
        from kubernetes.client.exceptions import ApiException

        def _delete() -> None:
            try:
                self._api.delete_namespaced_custom_object(
                    GROUP, VERSION, self.namespace, PLURAL, konnect_name(konnect_id)
                )
            except ApiException as exc:
                if exc.status != 404:
                    raise DeployError(f"Kubernetes refused to delete the Konnect: {exc.reason}") from exc

        await asyncio.to_thread(_delete)
