"""Behaviour of the test control plane itself: API server, controllers, scheduler + kwok, helm, kubectl.

Each test talks to a real kube-apiserver (fixture ``kube`` from conftest.py).
"""

from __future__ import annotations

import ipaddress
import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from kubernetes import client
from kubernetes.client import ApiException

CHART = Path(__file__).resolve().parent / "fixtures" / "hello-chart"
T = TypeVar("T")


def wait_for(what: str, fn: Callable[[], T | None], timeout: float = 60.0, interval: float = 0.2) -> T:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            value = fn()
            if value:
                return value
            last = value
        except ApiException as exc:
            last = f"{exc.status} {exc.reason}"
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


# --------------------------------------------------------------------------- CRD fixture


@pytest.fixture
def widget_crd(kube) -> Iterator[dict[str, str]]:
    """A namespaced CRD (unique group per test) with a schema and printer columns."""
    group = f"w{uuid.uuid4().hex[:8]}.tests.konnectz.io"
    plural = "widgets"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                        {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                        {"name": "Note", "type": "string", "jsonPath": ".spec.note", "priority": 1},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "required": ["size", "color"],
                                    "properties": {
                                        "size": {"type": "integer", "minimum": 1, "maximum": 10},
                                        "color": {"type": "string", "enum": ["red", "green", "blue"]},
                                        "note": {"type": "string", "maxLength": 40},
                                    },
                                },
                                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            },
                        }
                    },
                }
            ],
        },
    }
    ext = client.ApiextensionsV1Api(kube.api)
    ext.create_custom_resource_definition(crd)

    def established():
        got = ext.read_custom_resource_definition(f"{plural}.{group}")
        return any(c.type == "Established" and c.status == "True" for c in (got.status.conditions or []))

    wait_for("CRD Established", established, timeout=30)
    try:
        yield {"group": group, "version": "v1", "plural": plural, "kind": "Widget"}
    finally:
        ext.delete_custom_resource_definition(f"{plural}.{group}")


def widget(name: str, group: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


def deployment(name: str, replicas: int = 1, owner: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"app": name}}
    if owner:
        meta["ownerReferences"] = [owner]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "registry.invalid/konnectz/none:1"}]},
            },
        },
    }


# --------------------------------------------------------------------------- tests


def test_server_reports_stamped_version(kube):
    info = client.VersionApi(kube.api).get_code()
    # Built with -X k8s.io/component-base/version.* (else it says v0.0.0-master and helm's
    # kubeVersion checks break).
    assert info.major == "1"
    assert info.git_version.startswith(f"v1.{info.minor}."), info.git_version
    assert int(info.minor) >= 30


def test_crd_served_and_schema_validated(kube, namespace, widget_crd):
    co = client.CustomObjectsApi(kube.api)
    g, v, p = widget_crd["group"], widget_crd["version"], widget_crd["plural"]

    # discovery serves the new resource
    resources = co.get_api_resources(g, v)
    assert [r.name for r in resources.resources if r.name == p] == [p]

    ok = widget("good", g, size=3, color="blue", unknownField="pruned")
    created = co.create_namespaced_custom_object(g, v, namespace, p, ok)
    assert created["spec"]["size"] == 3
    assert "unknownField" not in created["spec"], "structural schema must prune unknown fields"

    with pytest.raises(ApiException) as err:
        co.create_namespaced_custom_object(g, v, namespace, p, widget("bad", g, size=99, color="purple"))
    assert err.value.status == 422
    body = json.loads(err.value.body)
    assert body["reason"] == "Invalid"
    message = body["message"]
    assert "spec.size: Invalid value: 99: spec.size in body should be less than or equal to 10" in message
    assert 'spec.color: Unsupported value: "purple"' in message

    with pytest.raises(ApiException) as err:
        co.create_namespaced_custom_object(g, v, namespace, p, widget("nosize", g, color="red"))
    assert err.value.status == 422
    assert "spec.size: Required value" in json.loads(err.value.body)["message"]

    names = [o["metadata"]["name"] for o in co.list_namespaced_custom_object(g, v, namespace, p)["items"]]
    assert names == ["good"]


def test_deployment_owned_by_custom_resource_is_garbage_collected(kube, namespace, widget_crd):
    co = client.CustomObjectsApi(kube.api)
    apps = client.AppsV1Api(kube.api)
    g, v, p = widget_crd["group"], widget_crd["version"], widget_crd["plural"]

    owner = co.create_namespaced_custom_object(g, v, namespace, p, widget("owner", g, size=1, color="red"))
    ref = {
        "apiVersion": f"{g}/{v}",
        "kind": "Widget",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    apps.create_namespaced_deployment(namespace, deployment("owned", owner=ref))
    apps.create_namespaced_deployment(namespace, deployment("orphan"))
    # the Deployment controller made a ReplicaSet for the owned Deployment
    wait_for(
        "ReplicaSet of owned",
        lambda: apps.list_namespaced_replica_set(namespace, label_selector="app=owned").items,
        timeout=30,
    )

    co.delete_namespaced_custom_object(g, v, namespace, p, "owner")

    def owned_gone():
        try:
            apps.read_namespaced_deployment("owned", namespace)
            return False
        except ApiException as exc:
            if exc.status == 404:
                return True
            raise

    wait_for("garbage collection of Deployment 'owned'", owned_gone, timeout=120)
    # ... and its ReplicaSet with it (cascading), while the unowned Deployment stays.
    wait_for(
        "ReplicaSet of owned collected",
        lambda: not apps.list_namespaced_replica_set(namespace, label_selector="app=owned").items,
        timeout=60,
    )
    assert apps.read_namespaced_deployment("orphan", namespace).metadata.name == "orphan"


def test_deployment_pods_become_ready_on_kwok_node(kube, namespace):
    apps = client.AppsV1Api(kube.api)
    core = client.CoreV1Api(kube.api)
    apps.create_namespaced_deployment(namespace, deployment("web", replicas=3))

    def all_ready():
        d = apps.read_namespaced_deployment_status("web", namespace)
        return d.status.ready_replicas == 3 and d.status.available_replicas == 3

    wait_for("3 ready replicas", all_ready, timeout=60)
    pods = core.list_namespaced_pod(namespace, label_selector="app=web").items
    assert len(pods) == 3
    cidr = ipaddress.ip_network("10.244.0.0/16")
    for pod in pods:
        assert pod.spec.node_name == kube.node_name  # bound by kube-scheduler
        assert pod.status.phase == "Running"  # driven by kwok's stages
        assert {c.type: c.status for c in pod.status.conditions}["Ready"] == "True"
        assert ipaddress.ip_address(pod.status.pod_ip) in cidr
    node = core.read_node(kube.node_name)
    assert node.metadata.annotations.get("kwok.x-k8s.io/node") == "fake"

    # scaling down is honoured by the controllers too
    apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 1}})
    wait_for(
        "scale down to 1 pod",
        lambda: (
            len(
                [
                    p
                    for p in core.list_namespaced_pod(namespace, label_selector="app=web").items
                    if p.metadata.deletion_timestamp is None
                ]
            )
            == 1
        ),
        timeout=60,
    )


def test_cronjob_creates_job_on_schedule(kube, namespace):
    batch = client.BatchV1Api(kube.api)
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "tick"},
        "spec": {
            "schedule": "* * * * *",
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {
                "spec": {
                    "backoffLimit": 0,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "tick", "image": "registry.invalid/konnectz/tick:1"}],
                        }
                    },
                }
            },
        },
    }
    created = batch.create_namespaced_cron_job(namespace, cron)
    assert batch.list_namespaced_job(namespace).items == []

    def owned_job():
        for job in batch.list_namespaced_job(namespace).items:
            refs = job.metadata.owner_references or []
            if any(r.kind == "CronJob" and r.uid == created.metadata.uid for r in refs):
                return job
        return None

    job = wait_for("a Job created by the CronJob", owned_job, timeout=90, interval=1)
    assert job.metadata.name.startswith("tick-")
    # kwok's pod-complete stage finishes Job pods, so the Job completes
    wait_for(
        "the Job to complete",
        lambda: batch.read_namespaced_job_status(job.metadata.name, namespace).status.succeeded == 1,
        timeout=60,
    )
    status = batch.read_namespaced_cron_job_status("tick", namespace).status
    assert status.last_schedule_time is not None


def test_helm_template_and_install(kube, namespace):
    helm = kube.helm
    version = kube.run(helm, "version", "--short").stdout
    assert version.startswith("v3."), version

    rendered = kube.run(
        helm, "template", "demo", str(CHART), "--set", "message=rendered-ok", "--set", "replicaCount=4"
    ).stdout
    docs = {d["kind"]: d for d in yaml.safe_load_all(rendered) if d}
    assert docs["ConfigMap"]["data"]["message"] == "rendered-ok"
    assert docs["Deployment"]["spec"]["replicas"] == 4

    too_old = kube.run(helm, "template", "demo", str(CHART), "--kube-version", "1.20.0", check=False)
    assert too_old.returncode != 0
    assert "incompatible with Kubernetes v1.20.0" in too_old.stderr

    kube.run(
        helm,
        "install",
        "demo",
        str(CHART),
        "-n",
        namespace,
        "--wait",
        "--timeout",
        "90s",
        "--set",
        "message=installed-ok",
        timeout=150,
    )
    releases = json.loads(kube.run(helm, "list", "-n", namespace, "-o", "json").stdout)
    assert [(r["name"], r["status"]) for r in releases] == [("demo", "deployed")]

    cm = client.CoreV1Api(kube.api).read_namespaced_config_map("demo-config", namespace)
    server_version = client.VersionApi(kube.api).get_code().git_version
    assert cm.data["message"] == "installed-ok"
    assert cm.data["kubeVersion"] == server_version  # helm asked the real API server
    d = client.AppsV1Api(kube.api).read_namespaced_deployment_status("demo-web", namespace)
    assert d.status.ready_replicas == 2  # --wait returned only after kwok made the pods Ready

    kube.run(helm, "uninstall", "demo", "-n", namespace, "--wait")
    with pytest.raises(ApiException) as err:
        client.CoreV1Api(kube.api).read_namespaced_config_map("demo-config", namespace)
    assert err.value.status == 404


def test_kubectl_get_shows_printer_columns(kube, namespace, widget_crd):
    co = client.CustomObjectsApi(kube.api)
    g, v, p = widget_crd["group"], widget_crd["version"], widget_crd["plural"]
    co.create_namespaced_custom_object(g, v, namespace, p, widget("alpha", g, size=7, color="green", note="first"))
    co.create_namespaced_custom_object(g, v, namespace, p, widget("beta", g, size=2, color="red"))

    out = kube.run(kube.kubectl, "get", f"{p}.{g}", "-n", namespace).stdout
    lines = [line.split() for line in out.strip().splitlines()]
    assert lines[0] == ["NAME", "SIZE", "COLOR", "AGE"], out
    rows = {r[0]: r[1:3] for r in lines[1:]}
    assert rows == {"alpha": ["7", "green"], "beta": ["2", "red"]}

    wide = kube.run(kube.kubectl, "get", f"{p}.{g}", "-n", namespace, "-o", "wide").stdout
    header, *rest = [line.split() for line in wide.strip().splitlines()]
    # the priority-1 column appears only with -o wide, in definition order
    assert header == ["NAME", "SIZE", "COLOR", "NOTE", "AGE"], wide
    assert next(r for r in rest if r[0] == "alpha")[:4] == ["alpha", "7", "green", "first"]

    # kubectl validates against the same schema: the API server's message comes back
    bad = kube.run(
        kube.kubectl,
        "patch",
        f"{p}.{g}",
        "beta",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        '{"spec":{"size":0}}',
        check=False,
    )
    assert bad.returncode != 0
    assert "spec.size in body should be greater than or equal to 1" in bad.stderr
