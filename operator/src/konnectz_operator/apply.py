"""Sends rendered manifests to the Kubernetes API: create, and on 409 patch.

:class:`Kube` is a thin, dict-in/dict-out client over ``kubernetes.client.ApiClient`` for
the few kinds the operator manages (the generated typed APIs want model objects, and the
renders are plain dicts). Errors are the client's ``ApiException``; the handlers map them
to Kopf's retry policy (:func:`konnectz_operator.errors.to_kopf_error`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from kubernetes import client, config
from kubernetes.client import ApiException

__all__ = ["CHILD_KINDS", "Kube", "apply", "load_api_client", "load_configuration", "prune"]

log = logging.getLogger(__name__)

FIELD_MANAGER = "konnectz-operator"

# (apiVersion, kind) -> plural of every kind the operator reads or writes.
_PLURALS: dict[tuple[str, str], str] = {
    ("v1", "ConfigMap"): "configmaps",
    ("v1", "Service"): "services",
    ("apps/v1", "Deployment"): "deployments",
    ("batch/v1", "CronJob"): "cronjobs",
    ("networking.k8s.io/v1", "Ingress"): "ingresses",
    ("konnectz.io/v1alpha1", "Konnect"): "konnects",
}
# Kinds a Konnect may own, in the order they are pruned (consumers before what they mount).
CHILD_KINDS: tuple[tuple[str, str], ...] = (
    ("networking.k8s.io/v1", "Ingress"),
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
    ("batch/v1", "CronJob"),
    ("v1", "ConfigMap"),
)
# Built-in kinds accept strategic merge patches (lists merge by key); custom resources do not.
_MERGE = "application/merge-patch+json"
_STRATEGIC = "application/strategic-merge-patch+json"


# Threads Kopf runs sync handlers on (and HTTP connections kept to the API server). 8 reconcile
# 500 Konnects as fast as 32 on 2 cores, with less memory (make bench).
WORKERS = 8


def load_configuration() -> client.Configuration:
    """Client configuration for the in-cluster service account, else the kubeconfig in $KUBECONFIG."""
    configuration = client.Configuration()
    try:
        config.load_incluster_config(client_configuration=configuration)
    except config.ConfigException:
        # $KUBECONFIG is read now: the client's own default was fixed when it was imported.
        config.load_kube_config(config_file=os.environ.get("KUBECONFIG"), client_configuration=configuration)
    # Kopf runs sync handlers on a thread pool; one pooled connection per worker thread.
    configuration.connection_pool_maxsize = WORKERS
    return configuration


def load_api_client() -> client.ApiClient:
    return client.ApiClient(load_configuration())


def path_of(api_version: str, kind: str, namespace: str, name: str | None = None) -> str:
    plural = _PLURALS.get((api_version, kind))
    if plural is None:
        raise ValueError(f"unsupported kind {api_version}/{kind}")
    prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    path = f"{prefix}/namespaces/{namespace}/{plural}"
    return f"{path}/{name}" if name else path


class Kube:
    """Create, patch, get and delete namespaced objects given as dicts."""

    def __init__(self, api_client: client.ApiClient, *, timeout: float = 30.0) -> None:
        self.api_client = api_client
        self.timeout = timeout

    def request(
        self,
        method: Literal["GET", "POST", "PATCH", "DELETE"],
        path: str,
        *,
        body: Any = None,
        content_type: str = "application/json",
        query: Iterable[tuple[str, str]] = (),
    ) -> dict[str, Any]:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        m, url, hdrs, data, post = self.api_client.param_serialize(
            method=method,
            resource_path=path,
            query_params=list(query) or None,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        response = self.api_client.call_api(
            m, url, header_params=hdrs, body=data, post_params=post, _request_timeout=self.timeout
        )
        response.read()
        result = self.api_client.response_deserialize(response, {"2XX": "object"}).data
        return result if isinstance(result, dict) else {}

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        return self.request(
            "POST",
            path_of(obj["apiVersion"], obj["kind"], meta["namespace"]),
            body=dict(obj),
            query=[("fieldManager", FIELD_MANAGER)],
        )

    def patch(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        builtin = not obj["apiVersion"].startswith("konnectz.io/")
        return self.request(
            "PATCH",
            path_of(obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"]),
            body=dict(obj),
            content_type=_STRATEGIC if builtin else _MERGE,
            query=[("fieldManager", FIELD_MANAGER)],
        )

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self.request("GET", path_of(api_version, kind, namespace, name))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def delete(self, api_version: str, kind: str, namespace: str, name: str) -> bool:
        """Delete (children in the background); False when it was already gone."""
        try:
            self.request(
                "DELETE",
                path_of(api_version, kind, namespace, name),
                body={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"},
            )
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def patch_status(
        self, api_version: str, kind: str, namespace: str, name: str, status: Mapping[str, Any]
    ) -> dict[str, Any]:
        return self.request(
            "PATCH",
            path_of(api_version, kind, namespace, name) + "/status",
            body={"status": dict(status)},
            content_type=_MERGE,
            query=[("fieldManager", FIELD_MANAGER)],
        )


def apply(kube: Kube, obj: Mapping[str, Any]) -> Literal["created", "patched"]:
    """Create ``obj``; if it exists already (409), patch it to the rendered state."""
    try:
        kube.create(obj)
        return "created"
    except ApiException as exc:
        if exc.status != 409:
            raise
    kube.patch(obj)
    return "patched"


def prune(kube: Kube, namespace: str, name: str, keep: Iterable[Mapping[str, Any]], *, owner_uid: str) -> list[str]:
    """Delete the children named ``name`` whose kind is not among ``keep`` (e.g. after a trigger change).

    Only objects owned by the Konnect ``owner_uid`` are deleted, so a same-named object of
    anyone else survives.
    """
    kept = {(obj["apiVersion"], obj["kind"]) for obj in keep}
    deleted = []
    for api_version, kind in CHILD_KINDS:
        if (api_version, kind) in kept:
            continue
        existing = kube.get(api_version, kind, namespace, name)
        if existing is None:
            continue
        owners = (existing.get("metadata") or {}).get("ownerReferences") or []
        if not any(ref.get("uid") == owner_uid for ref in owners):
            log.warning("Not pruning %s %s/%s: not owned by this Konnect", kind, namespace, name)
            continue
        if kube.delete(api_version, kind, namespace, name):
            deleted.append(f"{kind}/{name}")
    return deleted
