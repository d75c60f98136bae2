"""A runner of two processes on one port (KONNECTZ_RUNNER_PROCESSES=2), through the real platform.

Both children serve the webhook port and execute runs from the same JetStream consumer: every
accepted webhook ends as exactly one task log and one API call. When the parent dies (SIGKILL, as a
crash), the kernel takes its children with it, so a restarted runner finds its port free and no
orphan keeps executing.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import child_pids, publish_canvas, sign_up, wait_until, webhook_canvas

pytestmark = pytest.mark.integration


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat")
    return state.exists() and state.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_two_runner_processes_share_the_port_and_die_with_their_parent(receiver) -> None:
    with running_platform("konnectz-procs-", KONNECTZ_RUNNER_PROCESSES="2") as platform:
        runner = platform.proc("runner")
        assert runner is not None
        children = wait_until(lambda: c if len(c := child_pids(runner.pid)) == 2 else None, what="two children")
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        headers = sign_up(api, "procs@example.com", "correct horse battery")
        canvas = webhook_canvas(f"{receiver.url}/orders", body=[{"key": "n", "value": "{{node-1.n}}"}])
        published = publish_canvas(api, headers, canvas)
        konnect_id, hook = published["konnect_id"], published["webhook_url"]
        wait_until(lambda: httpx.head(hook).status_code == 200, what="the webhook is live")
        run_ids = set()
        for n in range(40):  # a new connection each time: the kernel spreads them over the children
            reply = httpx.post(hook, json={"n": n})
            assert reply.status_code == 200, reply.text
            run_ids.add(reply.json()["run_id"])
        logs = wait_until(
            lambda: (
                got
                if (
                    got := api.get(
                        f"/api/v1/task_logs/logs?konnect_id={konnect_id}&page_size=100", headers=headers
                    ).json()
                )["total"]
                >= 40
                else None
            ),
            timeout=60,
            what="40 task logs",
        )
        assert logs["total"] == 40 and {log["run_id"] for log in logs["task_logs"]} == run_ids
        assert sorted(int(r["body"]["n"]) for r in receiver.requests) == list(range(40))  # each call once
        # A crash of the parent takes the children with it.
        os.kill(runner.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(c) for c in children)
