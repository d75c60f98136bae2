"""apply.Kube against a small in-process HTTP server that answers like the Kubernetes API."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import kopf
import pytest

from konnectz_operator.apply import Kube, KubeError, apply, connect, path_of, prune


@dataclass
class FakeApi:
    """Objects by path; every request is recorded as (method, path+query, content-type, body)."""

    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str, str, Any]] = field(default_factory=list)
    fail: dict[tuple[str, str], tuple[int, dict[str, str]]] = field(default_factory=dict)


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            api.requests.append((self.command, self.path, self.headers.get("Content-Type", ""), body))
            path = self.path.split("?", 1)[0].removesuffix("/status")
            if (self.command, path) in api.fail:
                status, headers = api.fail[(self.command, path)]
                self._reply(status, {"kind": "Status", "code": status, "message": "injected"}, headers)
                return
            if self.command == "POST":
                target = f"{path}/{body['metadata']['name']}"
                if target in api.objects:
                    self._reply(409, {"kind": "Status", "code": 409, "reason": "AlreadyExists"})
                    return
                api.objects[target] = body
                self._reply(201, body)
            elif path not in api.objects:
                self._reply(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
            elif self.command == "GET":
                self._reply(200, api.objects[path])
            elif self.command == "PATCH":
                merged = {**api.objects[path], **body}
                api.objects[path] = merged
                self._reply(200, merged)
            elif self.command == "DELETE":
                self._reply(200, api.objects.pop(path))

        do_GET = do_POST = do_PATCH = do_DELETE = _handle

    return Handler


@pytest.fixture
def fake() -> Iterator[tuple[FakeApi, Kube]]:
    api = FakeApi()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    info = kopf.ConnectionInfo(server=f"http://127.0.0.1:{server.server_address[1]}", token="test-token")
    try:
        yield api, Kube(connect(info, timeout=5), timeout=5)
    finally:
        server.shutdown()
        server.server_close()


def _cm(name: str = "kz-k", data: str = "1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}, "data": {"a": data}}


def test_paths_follow_the_api_groups():
    assert path_of("v1", "ConfigMap", "ns") == "/api/v1/namespaces/ns/configmaps"
    assert path_of("apps/v1", "Deployment", "ns", "d") == "/apis/apps/v1/namespaces/ns/deployments/d"
    assert path_of("batch/v1", "CronJob", "ns", "c") == "/apis/batch/v1/namespaces/ns/cronjobs/c"
    with pytest.raises(ValueError, match="unsupported kind"):
        path_of("v1", "Pod", "ns")


def test_apply_creates_then_patches_on_conflict(fake):
    api, kube = fake
    assert apply(kube, _cm(data="1")) == "created"
    assert apply(kube, _cm(data="2")) == "patched"

    assert api.objects["/api/v1/namespaces/ns/configmaps/kz-k"]["data"] == {"a": "2"}
    methods = [(m, p.split("?")[0], ct) for m, p, ct, _ in api.requests]
    assert methods == [
        ("POST", "/api/v1/namespaces/ns/configmaps", "application/json"),
        ("POST", "/api/v1/namespaces/ns/configmaps", "application/json"),
        ("PATCH", "/api/v1/namespaces/ns/configmaps/kz-k", "application/strategic-merge-patch+json"),
    ]
    assert all("fieldManager=konnectz-operator" in p for _, p, _, _ in api.requests)


def test_requests_carry_the_bearer_token(fake):
    _, kube = fake
    seen: list[str] = []
    kube.http.event_hooks["request"].append(lambda request: seen.append(request.headers.get("authorization", "")))
    kube.create(_cm())
    assert seen == ["Bearer test-token"]


def test_server_errors_surface_as_api_exceptions(fake):
    api, kube = fake
    api.fail[("POST", "/api/v1/namespaces/ns/configmaps")] = (503, {"Retry-After": "7"})
    with pytest.raises(KubeError) as info:
        apply(kube, _cm())
    assert info.value.status == 503
    assert info.value.headers["Retry-After"] == "7"


def test_custom_resources_are_merge_patched(fake):
    api, kube = fake
    konnect = {"apiVersion": "konnectz.io/v1alpha1", "kind": "Konnect", "metadata": {"name": "k", "namespace": "ns"}}
    kube.create(konnect)
    kube.patch({**konnect, "spec": {"paused": True}})
    kube.patch_status("konnectz.io/v1alpha1", "Konnect", "ns", "k", {"lastScheduleTime": "2026-01-01T00:00:00Z"})
    patches = [(p.split("?")[0], ct, body) for m, p, ct, body in api.requests if m == "PATCH"]
    assert patches[0][:2] == ("/apis/konnectz.io/v1alpha1/namespaces/ns/konnects/k", "application/merge-patch+json")
    assert patches[1] == (
        "/apis/konnectz.io/v1alpha1/namespaces/ns/konnects/k/status",
        "application/merge-patch+json",
        {"status": {"lastScheduleTime": "2026-01-01T00:00:00Z"}},
    )


def test_get_and_delete_treat_missing_objects_as_none(fake):
    _, kube = fake
    assert kube.get("v1", "ConfigMap", "ns", "nope") is None
    assert kube.delete("v1", "ConfigMap", "ns", "nope") is False
    kube.create(_cm())
    assert kube.get("v1", "ConfigMap", "ns", "kz-k")["data"] == {"a": "1"}
    assert kube.delete("v1", "ConfigMap", "ns", "kz-k") is True


def test_prune_deletes_only_owned_children_of_kinds_no_longer_rendered(fake):
    api, kube = fake
    owner = [{"apiVersion": "konnectz.io/v1alpha1", "kind": "Konnect", "name": "k", "uid": "u1"}]
    cm = {**_cm(), "metadata": {"name": "kz-k", "namespace": "ns", "ownerReferences": owner}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {**cm["metadata"]}}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kz-k", "namespace": "ns"}}  # not ours
    for obj in (cm, dep, svc):
        kube.create(obj)
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "kz-k", "namespace": "ns"}}

    deleted = prune(kube, "ns", "kz-k", [cm, cron], owner_uid="u1")

    assert deleted == ["Deployment/kz-k"]
    assert "/apis/apps/v1/namespaces/ns/deployments/kz-k" not in api.objects
    assert "/api/v1/namespaces/ns/services/kz-k" in api.objects
    assert "/api/v1/namespaces/ns/configmaps/kz-k" in api.objects
    (delete,) = [body for m, _, _, body in api.requests if m == "DELETE"]
    assert delete["propagationPolicy"] == "Background"
