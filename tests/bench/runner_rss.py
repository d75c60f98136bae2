"""Idle RSS of one runner process: a pool runner holding N konnects, and a dedicated runner (one konnect).

``.venv/bin/python tests/bench/runner_rss.py [N ...]`` (default 1 1000 10000) starts its own nats-server,
fills KZ_KONNECTS with N webhook konnects, starts ``konnectz_runner serve`` with KONNECTZ_POOL=true,
waits for /healthz, settles 3 s and prints VmRSS. The figures of docs/kubernetes.md ("Which mode") come
from it.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import nats

from konnectz_contracts.events import KV_KONNECTS, konnect_key
from konnectz_contracts.spec import ApiCallStep, FlowSpec, KeyValue, WebhookTrigger
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._ports import free_port
from konnectz_runner.bus import ensure_streams


def spec(konnect_id: int) -> FlowSpec:
    return FlowSpec(
        konnect_id=konnect_id, owner_id=1, name=f"Flow {konnect_id}", trigger_id="node-1",
        trigger=WebhookTrigger(token=secrets.token_urlsafe(24)),
        steps=[ApiCallStep(id="node-2", name="Call", url="https://api.example.com/orders",
                           body=[KeyValue(key="n", value="{{node-1.n}}")])],
    )  # fmt: skip


async def fill(url: str, count: int) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream()
    await ensure_streams(js)
    kv = await js.key_value(KV_KONNECTS)
    for start in range(0, count, 500):
        await asyncio.gather(
            *(
                kv.put(konnect_key(i), spec(i).model_dump_json().encode())
                for i in range(start + 1, min(count, start + 500) + 1)
            )
        )
    await nc.close()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def measure(nats: NatsServer, extra_env: dict[str, str]) -> tuple[float, float]:
    port = free_port()
    env = {**os.environ, **nats.env("runner"), "KONNECTZ_ENFORCE_QUOTA": "false", **extra_env}
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "konnectz_runner", "serve", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                raise RuntimeError("runner exited")
            time.sleep(0.2)
        ready = time.monotonic() - started
        time.sleep(3)
        return rss_mib(proc.pid), ready
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    counts = [int(a) for a in sys.argv[1:]] or [1, 1000, 10000]
    for count in counts:
        with tempfile.TemporaryDirectory() as tmp:
            server = NatsServer(Path(tmp), free_port())
            server.start()
            try:
                asyncio.run(fill(server.admin_url, count))
                rss, ready = measure(server, {"KONNECTZ_POOL": "true"})
                print(f"pool runner, {count} konnects: RSS {rss:.0f} MiB, ready in {ready:.1f} s", flush=True)
                if count == 1:
                    spec_file = Path(tmp) / "spec.json"
                    spec_file.write_text(spec(1).model_dump_json())
                    rss, ready = measure(server, {"KONNECTZ_SPEC_FILE": str(spec_file)})
                    print(f"dedicated runner, 1 konnect: RSS {rss:.0f} MiB, ready in {ready:.1f} s", flush=True)
            finally:
                server.stop()


if __name__ == "__main__":
    main()
