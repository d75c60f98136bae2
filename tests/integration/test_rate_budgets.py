"""Rate budgets per app account, enforced across runner processes (docs/rate-budgets.md).

Real processes: the api, PostgreSQL, NATS and a runner of three processes (KONNECTZ_RUNNER_PROCESSES=3:
three OS processes serving one webhook port and executing runs from one JetStream consumer). One
token account of a local fake app is used by a konnect whose action calls the app; the app's manifest
allows 1 request/s, the account's owner overrides it to 5 requests/s through the api. 110 webhook
runs keep the three processes busy for 20+ seconds.

The bound asserted: the budget is a token bucket of rate r = 5/s and burst b = 1, so in any interval
of length T at most b + r*T requests may leave (slots are paced 2% below r, the headroom for
requests that arrive late): the test asserts, of the times the fake received the requests, at most
101 in every 20-second window (the issue's measure), and at most 27 in every 5-second window and 7
in every closed 1-second window (r*T + b, plus one request delayed in transit by more than a slot,
which the headroom absorbs only over longer windows: docs/rate-budgets.md), that 110 requests (one per
run, no retry) took at least (110 - 1) / 5 s, that every run ended
as a SUCCESS task log, and that steps recorded why they waited (wait_reason).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import catalogue_with, curated_app, token_auth
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import (
    add_account,
    app_node,
    child_pids,
    publish_canvas,
    sign_up,
    wait_until,
    webhook_node,
)

pytestmark = pytest.mark.integration
KEY = "budget-key-0123456789"
APP_ID = 990301
RUNS = 110
RATE = 5
BURST = 1


# The fake app runs in a process of its own, so that the test's own threads (posting the webhooks,
# reading task logs) do not delay it; it stamps each request when its connection is accepted.
PING_APP = r"""
import json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = sys.argv[1]
arrivals, bodies, lock = [], [], threading.Lock()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    stamps = {}

    def get_request(self):
        sock, addr = super().get_request()
        self.stamps[id(sock)] = time.time()
        return sock, addr


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/arrivals":
            with lock:
                return self._reply(200, {"arrivals": list(arrivals), "bodies": list(bodies)})
        if self.headers.get("Authorization") != "Token " + KEY:
            return self._reply(401, {"error": "bad key"})
        if self.path == "/me":
            return self._reply(200, {"name": "Budget account"})
        return self._reply(404, {})

    def do_POST(self):
        now = self.server.stamps.pop(id(self.request), time.time())  # every request counts
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"null")
        with lock:
            arrivals.append(now)
            if self.headers.get("Authorization") == "Token " + KEY:
                bodies.append(body)
        if self.headers.get("Authorization") != "Token " + KEY:
            return self._reply(401, {"error": "bad key"})
        return self._reply(200, {"ok": True})


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class PingApp:
    """A fake third-party API: ``GET /me`` (the account test), ``POST /ping`` (recorded: when its
    connection was accepted, and its body), ``GET /arrivals`` (what was recorded)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", PING_APP, KEY], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline())}"

    def recorded(self) -> tuple[list[float], list[Any]]:
        got = httpx.get(f"{self.url}/arrivals", timeout=30).json()
        return sorted(got["arrivals"]), got["bodies"]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


MANIFEST = curated_app(
    APP_ID,
    "pingapp",
    "Ping App",
    auth=token_auth(),
    events=[
        {
            "key": "ping",
            "kind": "action",
            "label": "Ping",
            "operation": {"method": "POST", "path": "/ping"},
            "fields": [{"key": "n", "label": "N", "type": "string", "location": "body"}],
        }
    ],
    # The app's own rate; the test's account overrides it to RATE.
    rate_limit={"requests_per_second": 1, "burst": BURST, "max_retries": 3},
)


@pytest.fixture(scope="module")
def ping() -> Iterator[PingApp]:
    app = PingApp()
    yield app
    app.stop()


@pytest.fixture(scope="module")
def platform(ping: PingApp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    root = catalogue_with(tmp_path_factory.mktemp("catalogue"), MANIFEST, ping.url)
    # Three runner processes, each running up to 8 runs at once (24 waiting for the budget at a time).
    # The ingress backlog bound counts only runs (KONNECTZ_MAX_QUEUE_SECONDS=0): by default it also
    # refuses webhooks (429) once the queue holds more than 1.5 s of what the runners drain, and
    # these runs drain at the budget's 5/s (docs/rate-budgets.md, Limits).
    env = {
        "KONNECTZ_CATALOGUE_DIR": str(root),
        "KONNECTZ_RUNNER_PROCESSES": "3",
        "KONNECTZ_WORKER_CONCURRENCY": "8",
        "KONNECTZ_MAX_QUEUE_SECONDS": "0",
    }
    with running_platform("konnectz-budgets-", **env) as plat:
        yield plat


def _most_in_window(times: list[float], width: float) -> int:
    times = sorted(times)
    most, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] > width:  # a closed window [times[start], t] of length <= width
            start += 1
        most = max(most, end - start + 1)
    return most


def test_three_runner_processes_share_one_account_budget(platform: Platform, ping: PingApp) -> None:
    runner = platform.proc("runner")
    assert runner is not None
    wait_until(lambda: len(child_pids(runner.pid)) == 3 or None, what="three runner processes")
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, "budgets@example.com", "a-long-password")
    account_id = add_account(api, headers, APP_ID, {"api_key": KEY})
    override = api.put(f"/api/v1/app_users/{account_id}/rate_budget", json={"rate_limit_rps": RATE},
                       headers=headers)  # fmt: skip
    assert override.status_code == 200, override.text

    action = app_node(
        "node-2",
        "ActionNode",
        (APP_ID, "pingapp", "Ping App"),
        2,
        event={"id": "ping", "name": "Ping"},
        account={"id": account_id, "name": "Budget account"},
        config=[{"config_key": "n", "value": "{{node-1.n}}"}],
        x=600,
    )
    canvas = {"apps": [webhook_node(), action], "dataForSelect": {}, "flowName": "Pings",
              "links": [{"id": "e1", "source": "node-1", "target": "node-2"}]}  # fmt: skip
    published = publish_canvas(api, headers, canvas)
    konnect_id, hook = published["konnect_id"], published["webhook_url"]
    wait_until(lambda: httpx.head(hook).status_code == 200, what="the webhook is live")

    def post(n: int) -> int:  # a new connection each time: the kernel spreads them over the three processes
        return httpx.post(hook, json={"n": n}, timeout=30).status_code

    posting = time.time()
    with ThreadPoolExecutor(max_workers=12) as pool:  # faster than the budget drains them: a backlog builds
        assert set(pool.map(post, range(RUNS))) == {200}
    posted = time.time()

    def logs() -> dict[str, Any] | None:
        found: list[dict[str, Any]] = []
        for page in (1, 2):
            got = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}&page_size=100&page_index={page}",
                          headers=headers).json()  # fmt: skip
            found += got["task_logs"]
        return {"task_logs": found} if len(found) >= RUNS else None

    done = wait_until(logs, timeout=120, what=f"{RUNS} task logs")["task_logs"]

    arrivals, bodies = ping.recorded()
    runner_log = (platform.state_dir / "runner.log").read_text(errors="replace")
    fallbacks = [line for line in runner_log.splitlines() if "Rate budgets" in line]
    print("\n".join(["", *fallbacks]))
    print(  # the figures, for the report (pytest -s)
        f"\n{RUNS} runs posted in {posted - posting:.1f} s; {len(arrivals)} requests over "
        f"{arrivals[-1] - arrivals[0]:.1f} s; most in a 1 s window: {_most_in_window(arrivals, 1.0)}, "
        f"in a 5 s window: {_most_in_window(arrivals, 5.0)}"
    )
    # Nothing lost, every run a success, every request sent once.
    assert len(done) == RUNS
    assert {log["status"] for log in done} == {"SUCCESS"}
    assert sorted(int(b["n"]) for b in bodies) == list(range(RUNS))
    assert len(arrivals) == RUNS  # no retry: nothing was refused

    # The budget held across the three processes: at most 20 * RATE + BURST in any 20 s window (the
    # issue's measure), and the requests were spread over 20+ seconds. Over 1 s and 5 s, one request
    # delayed in transit by more than a slot (0.2 s) may arrive with the next: one more is allowed
    # there (without the budget, 110 requests posted in ~6 s reach the fake at 15+ per second).
    assert _most_in_window(arrivals, 20.0) <= 20 * RATE + BURST, _most_in_window(arrivals, 20.0)
    assert _most_in_window(arrivals, 5.0) <= 5 * RATE + BURST + 1, _most_in_window(arrivals, 5.0)
    assert _most_in_window(arrivals, 1.0) <= RATE + BURST + 1, _most_in_window(arrivals, 1.0)
    assert arrivals[-1] - arrivals[0] >= (RUNS - BURST) / RATE - 0.5  # 21.8 s for 110 at 5/s
    # How much of the budget was used once every run was posted (a figure, not asserted: on a loaded
    # machine the runs may reach the budget late, e.g. while the api's quota checks lag).
    backlog = [t for t in arrivals if t >= posted]
    if len(backlog) > 2:
        print(f"rate after posting: {(len(backlog) - 1) / (backlog[-1] - backlog[0]):.2f} requests/s")

    # Steps that waited say so in the task log.
    waited = []
    for log in done[:40]:
        tasks = api.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()["tasks"]
        waited += [t["data"] for t in tasks if t["data"].get("wait_reason")]
    assert waited, "no step recorded a wait"
    reason = "for the rate budget of Ping App (account 'Budget account'): 5 requests/s (your override)"
    assert [d for d in waited if reason not in d["wait_reason"] or not d["waited_seconds"] >= 0.05] == []
    print(f"steps that recorded a wait: {len(waited)} of the first 40 runs")
