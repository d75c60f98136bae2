"""Two operator replicas, one active: Kopf peering against the real API server of tests/cluster.

Both replicas run as separate processes (``python -m konnectz_operator``, as the chart's pods
do) in the same peering object; the one with the lower (random) priority pauses. When the active
one is killed, the standby takes over once the dead one's record expires.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from konnectz_contracts.resource import GROUP, PLURAL, VERSION, konnect_resource
from konnectz_contracts.spec import FlowSpec

pytestmark = pytest.mark.k8s

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "crds" / "konnects.konnectz.io.yaml"
PEERING_CRD = REPO / "charts" / "konnectz" / "crds" / "kopf-peering.yaml"
PAUSED = "Pausing operations in favour of"
RESUMED = "Resuming operations"


def _paused(log: str) -> bool:
    """Whether the replica is paused now. Kopf starts every replica paused until it has read the
    peering: a standby that saw the active one first never logs PAUSED (and never RESUMED); one
    that looked before the active one joined resumes, then logs PAUSED."""
    return log.rfind(RESUMED) < log.rfind(PAUSED) or RESUMED not in log


def wait_for(what: str, fn: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def konnect_body(name: str, konnect_id: int, namespace: str) -> dict[str, Any]:
    """A schedule Konnect as the api writes it (a CronJob child: nothing else is needed to be Ready)."""
    flow = FlowSpec.model_validate(
        {
            "konnect_id": konnect_id,
            "owner_id": 7,
            "name": "Every hour",
            "trigger_id": "node-1",
            "trigger": {"kind": "schedule", "schedule": {"schedule_type": "AtRegularIntervals", "every": 1,
                                                         "time_span": "Hours", "start": "2026-01-01T00:00:00"}},
            "steps": [{"kind": "api_call", "id": "node-2", "name": "Ping", "method": "GET",
                       "url": "https://crm.example.com/ping"}],
        }
    )  # fmt: skip
    body = konnect_resource(flow, namespace)
    body["metadata"]["name"] = name
    return body


@pytest.fixture(scope="module")
def crds(kube) -> None:
    for path in (CRD, PEERING_CRD):
        kube.run(kube.kubectl, "apply", "--server-side", "--force-conflicts", "-f", str(path))
    for crd in ("konnects.konnectz.io", "kopfpeerings.kopf.dev"):
        kube.run(kube.kubectl, "wait", "--for=condition=Established", "--timeout=60s", f"crd/{crd}")


def _start(kube, namespace: str, pod: str, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "KUBECONFIG": str(kube.kubeconfig),
        "POD_ID": pod,
        "KONNECTZ_NAMESPACE": namespace,
        "KONNECTZ_PEERING": "kz-operator",
        "KONNECTZ_PEERING_LIFETIME": "10",
        "KONNECTZ_LIVENESS_PORT": "0",
        "KONNECTZ_RUNNER_IMAGE": "konnectz-runner:test",
        "KONNECTZ_NATS_URL": "nats://nats.example:4222",
        "KONNECTZ_WEBHOOK_BASE_URL": "https://hooks.example.com",
    }
    env.pop("KONNECTZ_PEERING_PRIORITY", None)  # random, as in the chart
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "konnectz_operator", "--verbose"], env=env, stdout=out, stderr=subprocess.STDOUT
        )


def _phase(custom: client.CustomObjectsApi, namespace: str, name: str) -> str | None:
    got: dict[str, Any] = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
    return (got.get("status") or {}).get("phase")


def test_two_operator_replicas_one_active_and_the_standby_takes_over(kube, namespace, crds, tmp_path):
    custom = client.CustomObjectsApi(kube.api)

    def create(body: dict[str, Any]) -> None:
        custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

    custom.create_namespaced_custom_object(
        "kopf.dev", "v1", namespace, "kopfpeerings", {"apiVersion": "kopf.dev/v1", "kind": "KopfPeering",
                                                      "metadata": {"name": "kz-operator"}}
    )  # fmt: skip
    logs = {pod: tmp_path / f"{pod}.log" for pod in ("op-a", "op-b")}
    procs = {pod: _start(kube, namespace, pod, log) for pod, log in logs.items()}
    try:
        # Both replicas are in the peering object; one of them pauses in favour of the other.
        def both_peered() -> dict[str, Any] | None:
            peering = custom.get_namespaced_custom_object("kopf.dev", "v1", namespace, "kopfpeerings", "kz-operator")
            status = peering.get("status") or {}
            return status if {"op-a", "op-b"} <= set(status) else None

        peers = wait_for("both replicas in the KopfPeering", both_peered, timeout=90)
        assert peers["op-a"]["priority"] != peers["op-b"]["priority"]
        active = max(peers, key=lambda pod: peers[pod]["priority"])
        standby = "op-b" if active == "op-a" else "op-a"
        wait_for("the active replica to resume", lambda: not _paused(logs[active].read_text()), timeout=60)
        wait_for("the standby to stay paused", lambda: _paused(logs[standby].read_text()), timeout=60)

        create(konnect_body("konnect-1", 1, namespace))
        wait_for("the first Konnect to be Ready", lambda: _phase(custom, namespace, "konnect-1") == "Ready")
        time.sleep(1)
        assert "konnect-1" in logs[active].read_text()
        assert "Konnect reconciled" not in logs[standby].read_text()  # the standby did nothing
        assert PAUSED not in logs[active].read_text()

        # The active replica dies without a goodbye; the standby resumes and handles new Konnects.
        assert _paused(logs[standby].read_text())
        before = len(logs[standby].read_text())
        procs[active].send_signal(signal.SIGKILL)
        procs[active].wait(timeout=10)
        create(konnect_body("konnect-2", 2, namespace))
        wait_for("the standby to take over", lambda: _phase(custom, namespace, "konnect-2") == "Ready", timeout=90)
        assert RESUMED in logs[standby].read_text()[before:]
        assert procs[standby].poll() is None

        for name in ("konnect-1", "konnect-2"):
            custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
