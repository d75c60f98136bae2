"""`make bench`, the Kubernetes part: the operator against the real API server of tests/cluster.

Measures, with the operator as its own process (`python -m konnectz_operator`, as in the chart):
- the time for 500 Konnects created at once to reach Ready (target: under 60 s),
- the operator's resident memory after that (target: under 150 MiB),
- the publish-to-Ready latency of one change to a published Konnect.

Not part of `make test` (the file name does not match test_*.py); `make bench` selects bench_*.py.
Sizes: KONNECTZ_BENCH_KONNECTS (default 500).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from konnectz_contracts.resource import GROUP, PLURAL, VERSION, konnect_resource, token_secret
from konnectz_contracts.spec import FlowSpec

pytestmark = pytest.mark.k8s

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "crds" / "konnects.konnectz.io.yaml"
COUNT = int(os.environ.get("KONNECTZ_BENCH_KONNECTS", "500"))
TOKEN = "whk_" + "0123456789abcdef" * 2


def _konnect(i: int) -> dict[str, Any]:
    flow = {
        "version": 1,
        "konnect_id": i,
        "owner_id": 1 + i % 50,
        "name": f"Bench flow {i}",
        "trigger_id": "node-1",
        "trigger": {"kind": "webhook", "token": f"whk_{i:032d}"},
        "steps": [
            {
                "kind": "api_call",
                "id": "node-2",
                "name": "Call",
                "method": "POST",
                "url": "https://crm.example.com/api/contacts",
                "body": [{"key": "name", "value": "{{node-1.name}}"}],
            }
        ],
    }
    return konnect_resource(FlowSpec.model_validate(flow), "unused")


def _create(custom: client.CustomObjectsApi, core: client.CoreV1Api, namespace: str, i: int) -> None:
    """The Konnect and the Secret of its webhook token, as the api writes them."""
    body = _konnect(i)
    body["metadata"]["namespace"] = namespace
    created = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    token = f"whk_{i:032d}"
    core.create_namespaced_secret(
        namespace, token_secret(f"konnect-{i}", namespace, token, owner_uid=created["metadata"]["uid"])
    )


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _ready_count(custom: client.CustomObjectsApi, namespace: str) -> int:
    items = custom.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)["items"]
    return sum(1 for k in items if (k.get("status") or {}).get("phase") == "Ready")


def _line(name: str, value: str, target: str, met: bool) -> None:
    print(f"  {name:<38} {value:>12}   target {target:<10} {'met' if met else 'MISSED'}")


def bench_operator_reconciles_500_konnects(kube, namespace, tmp_path):
    kube.run(kube.kubectl, "apply", "--server-side", "--force-conflicts", "-f", str(CRD))
    kube.run(kube.kubectl, "wait", "--for=condition=Established", "--timeout=60s", "crd/konnects.konnectz.io")
    env = {
        **os.environ,
        "KUBECONFIG": str(kube.kubeconfig),
        "KONNECTZ_NAMESPACE": namespace,
        "KONNECTZ_RUNNER_IMAGE": "konnectz-runner:bench",
        "KONNECTZ_NATS_URL": "nats://nats.example:4222",
        "KONNECTZ_WEBHOOK_BASE_URL": "https://hooks.example.com",
        "KONNECTZ_LIVENESS_PORT": "0",
    }
    log = (tmp_path / "operator.log").open("wb")
    operator = subprocess.Popen([sys.executable, "-m", "konnectz_operator"], env=env, stdout=log, stderr=log)
    custom = client.CustomObjectsApi(kube.api)
    try:
        time.sleep(3)  # let Kopf start its watches
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=16) as pool:
            list(
                pool.map(
                    lambda i: _create(custom, client.CoreV1Api(kube.api), namespace, i),
                    range(1, COUNT + 1),
                )
            )
        created = time.monotonic() - started
        ready = 0
        while ready < COUNT and time.monotonic() - started < 600:
            time.sleep(0.5)
            ready = _ready_count(custom, namespace)
            assert operator.poll() is None, (tmp_path / "operator.log").read_text()[-3000:]
        all_ready = time.monotonic() - started
        assert ready == COUNT, f"only {ready} of {COUNT} Konnects became Ready in 600 s"
        rss = _rss_mib(operator.pid)

        # One change to a published konnect, until the operator has reconciled that generation.
        latencies = []
        for n in range(5):
            name = f"konnect-{1 + n}"
            t0 = time.monotonic()
            patched = custom.patch_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, name, {"spec": {"displayName": f"changed {n}"}}
            )
            generation = patched["metadata"]["generation"]
            while True:
                status = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name).get("status", {})
                if status.get("observedGeneration") == generation and status.get("phase") == "Ready":
                    break
                assert time.monotonic() - t0 < 60, status
                time.sleep(0.02)
            latencies.append(time.monotonic() - t0)
        latencies.sort()

        print(f"\nKubernetes operator bench ({COUNT} Konnects, webhook trigger, one runner Deployment each)")
        _line("create requests sent", f"{created:.1f} s", "-", True)
        _line(f"{COUNT} Konnects Ready", f"{all_ready:.1f} s", "< 60 s", all_ready < 60)
        _line("operator RSS after that", f"{rss:.0f} MiB", "< 150 MiB", rss < 150)
        _line("publish-to-Ready, one change (median)", f"{latencies[len(latencies) // 2] * 1000:.0f} ms", "-", True)
        _line("publish-to-Ready, one change (max of 5)", f"{latencies[-1] * 1000:.0f} ms", "-", True)
    finally:
        operator.terminate()
        try:
            operator.wait(timeout=20)
        except subprocess.TimeoutExpired:
            operator.kill()
        log.close()
