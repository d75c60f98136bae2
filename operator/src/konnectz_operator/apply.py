"""Sends rendered manifests to the Kubernetes API: create, and on 409 patch.

:class:`Kube` is a thin, dict-in/dict-out client (httpx, pooled connections) for the few kinds
the operator manages; the renders are plain dicts. Failed calls raise :class:`KubeError`; the
handlers map them to Kopf's retry policy (:func:`konnectz_operator.errors.to_kopf_error`).

The operator does not use the official ``kubernetes`` client library: importing it costs about
40 MiB of memory per process, which alone would put the operator above its 150 MiB budget at
500 Konnects (``make bench``). The connection comes from Kopf's own login functions (the
in-cluster service account, else ``$KUBECONFIG``), so Kopf and this client share credentials.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import httpx

if TYPE_CHECKING:  # kopf is loaded by login() only: `python -m konnectz_operator crd` runs without it
    import kopf

__all__ = ["CHILD_KINDS", "Kube", "KubeError", "apply", "connect", "login", "prune"]

log = logging.getLogger(__name__)

FIELD_MANAGER = "konnectz-operator"

# (apiVersion, kind) -> plural of every kind the operator reads or writes.
_PLURALS: dict[tuple[str, str], str] = {
    ("v1", "ConfigMap"): "configmaps",
    ("v1", "Service"): "services",
    ("v1", "Secret"): "secrets",
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
    ("v1", "Secret"),
)
# Built-in kinds accept strategic merge patches (lists merge by key); custom resources do not.
_MERGE = "application/merge-patch+json"
_STRATEGIC = "application/strategic-merge-patch+json"


# Threads Kopf runs sync handlers on (and HTTP connections kept to the API server). 8 reconcile
# 500 Konnects as fast as 32 on 2 cores, with less memory (make bench).
WORKERS = 8


class KubeError(Exception):
    """A call the Kubernetes API server answered with an error status (or could not be made: 0)."""

    def __init__(self, status: int, reason: str = "", body: str = "", headers: Mapping[str, str] | None = None):
        super().__init__(f"Kubernetes API {status} {reason}".strip())
        self.status = status
        self.reason = reason
        self.body = body
        self.headers: Mapping[str, str] = headers or {}


def login() -> kopf.ConnectionInfo:
    """Credentials of the in-cluster service account, else of the kubeconfig in $KUBECONFIG (read now)."""
    import kopf  # the operator's run loads it; the CRD generator (same package) does not need it

    settings = kopf.OperatorSettings()
    info = kopf.login_with_service_account(settings=settings) or kopf.login_with_kubeconfig(settings=settings)
    if info is None:
        raise kopf.LoginError("No Kubernetes credentials: neither a service account nor $KUBECONFIG")
    return info


def connect(info: kopf.ConnectionInfo, *, timeout: float = 30.0) -> httpx.Client:
    """A pooled HTTP client for the API server described by ``info``."""
    headers = {"Accept": "application/json"}
    if info.token:
        headers["Authorization"] = f"{info.scheme or 'Bearer'} {info.token}"
    auth = httpx.BasicAuth(info.username, info.password or "") if info.username else None
    secure = str(info.server).startswith("https:")
    return httpx.Client(
        base_url=str(info.server),
        headers=headers,
        auth=auth,
        verify=info.as_ssl_context() if secure else True,
        timeout=timeout,
        limits=httpx.Limits(max_connections=WORKERS, max_keepalive_connections=WORKERS),
    )


def path_of(api_version: str, kind: str, namespace: str, name: str | None = None) -> str:
    plural = _PLURALS.get((api_version, kind))
    if plural is None:
        raise ValueError(f"unsupported kind {api_version}/{kind}")
    prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    path = f"{prefix}/namespaces/{namespace}/{plural}"
    return f"{path}/{name}" if name else path


class Kube:
    """Create, patch, get and delete namespaced objects given as dicts.

    ``http`` is a client from :func:`connect`; without one, :func:`login` provides the
    credentials, and a 401 logs in again once (service-account tokens are rotated).
    """

    def __init__(self, http: httpx.Client | None = None, *, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self._relogin = http is None
        self._lock = threading.Lock()
        self.http = http if http is not None else connect(login(), timeout=timeout)

    def request(
        self,
        method: Literal["GET", "POST", "PATCH", "DELETE"],
        path: str,
        *,
        body: Any = None,
        content_type: str = "application/json",
        query: Iterable[tuple[str, str]] = (),
    ) -> dict[str, Any]:
        params = httpx.QueryParams(list(query))
        for attempt in range(2):
            try:
                response = self.http.request(
                    method, path, params=params, json=body, headers={"Content-Type": content_type}
                )
            except httpx.HTTPError as exc:
                raise KubeError(0, f"{type(exc).__name__}: {exc}") from exc
            if response.status_code == 401 and self._relogin and attempt == 0:
                with self._lock:
                    old, self.http = self.http, connect(login(), timeout=self.timeout)
                old.close()
                continue
            break
        if response.status_code >= 400:
            raise KubeError(response.status_code, response.reason_phrase, response.text, response.headers)
        if not response.content:
            return {}
        result = response.json()
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
        except KubeError as exc:
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
        except KubeError as exc:
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
    except KubeError as exc:
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
