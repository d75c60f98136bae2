"""A catalogue app's polling trigger through real processes (api + runner + PostgreSQL + NATS).

A token account of a local fake app is added (its test request passes), the trigger is tested
(the newest item of the live fake), the konnect published; the runner polls the app with the
credentials it fetches from the api's credential broker at poll time: the first poll records what
exists, a new item starts exactly one run and one task log, later polls with nothing new start none.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import nats
import pytest

from konnectz_contracts.events import KV_POLLS, konnect_key
from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer, catalogue_with, curated_app, token_auth
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import (
    add_account,
    api_call_node,
    app_node,
    review_node,
    sign_up,
    test_trigger,
    wait_until,
    webhook_node,
)

pytestmark = pytest.mark.integration
KEY = "tasks-key-0123456789"


class TasksApp:
    """A fake third-party API: ``GET /me`` (the account test), ``GET /tasks`` newest first."""

    def __init__(self) -> None:
        self.tasks: list[dict[str, Any]] = [{"id": 1, "title": "Existing task"}]
        self.polls: list[str] = []
        outer = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                if self.headers.get("Authorization") != f"Token {KEY}":
                    return self._reply(401, {"error": "bad key"})
                if self.path == "/me":
                    return self._reply(200, {"name": "Tasks of Ada"})
                if self.path.startswith("/tasks"):
                    outer.polls.append(self.path)
                    return self._reply(200, {"results": outer.tasks[::-1]})
                return self._reply(404, {})

            def do_POST(self) -> None:
                if self.headers.get("Authorization") != f"Token {KEY}":
                    return self._reply(401, {"error": "bad key"})
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                task = {"id": len(outer.tasks) + 1, "title": body.get("title")}
                outer.created.append(task)
                return self._reply(201, task)

        self.created: list[dict[str, Any]] = []
        self.server = LocalServer(Handler)
        self.url = self.server.url


MANIFEST = curated_app(
    990101,
    "tasksapp",
    "Tasks App",
    auth=token_auth(),
    events=[
        {
            "key": "new_task",
            "kind": "trigger",
            "label": "New Task",
            "operation": {"method": "GET", "path": "/tasks"},
            "output": {"items_path": "results", "sample": {"id": 0, "title": "A task"}},
            "trigger": {"type": "polling", "dedupe": "id", "interval_seconds": 300},
        },
        {
            "key": "create_task",
            "kind": "action",
            "label": "Create Task",
            "operation": {"method": "POST", "path": "/tasks"},
            "fields": [{"key": "title", "label": "Title", "type": "string", "location": "body"}],
        },
    ],
)


@pytest.fixture(scope="module")
def tasks() -> Iterator[TasksApp]:
    app = TasksApp()
    yield app
    app.server.stop()


@pytest.fixture(scope="module")
def platform(tasks: TasksApp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    root = catalogue_with(tmp_path_factory.mktemp("catalogue"), MANIFEST, tasks.url)
    # Poll every second instead of the manifest's five minutes, so the test sees several polls.
    env = {"KONNECTZ_CATALOGUE_DIR": str(root), "KONNECTZ_MAX_POLL_INTERVAL_SECONDS": "1"}
    with running_platform("konnectz-polling-", **env) as plat:
        yield plat


def cursor(platform: Platform, konnect_id: int) -> dict[str, Any]:
    async def read() -> dict[str, Any]:
        nc = await nats.connect(platform.nats.admin_url)
        try:
            kv = await nc.jetstream().key_value(KV_POLLS)
            try:
                entry = await kv.get(konnect_key(konnect_id))
            except Exception:
                return {}
            return json.loads(entry.value or b"{}")
        finally:
            await nc.close()

    return asyncio.run(read())


def test_a_new_item_starts_exactly_one_run(platform: Platform, tasks: TasksApp, receiver) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, "poller@example.com", "a-long-password")
    account_id = add_account(api, headers, MANIFEST["id"], {"api_key": KEY})
    trigger = {
        "id": "node-1",
        "type": "TriggerNode",
        "position": {"x": 0, "y": 0},
        "data": {
            "app_detail": {"id": MANIFEST["id"], "name": "Tasks App", "provider": "tasksapp", "app_index": 1},
            "selectedEvent": {"id": "new_task"},
            "selectedAccount": {"id": account_id, "name": "Tasks of Ada"},
        },
    }
    action = api_call_node(f"{receiver.url}/notes", body=[{"key": "note", "value": "New: {{node-1.title}}"}])
    canvas = {"flowName": "Tasks", "dataForSelect": {}, "apps": [trigger, action], "links": [
        {"source": "node-1", "target": "node-2"}]}  # fmt: skip

    tested = api.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": "node-1", "konnect_id": None, "canvas_json": canvas},
        headers=headers,
    ).json()
    assert tested["test_status"] == "Success" and tested["raw_response"] == {"id": 1, "title": "Existing task"}
    konnect_id = tested["konnect_id"]
    published = api.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_json": canvas, "canvas_name": True},
        headers=headers,
    )
    assert published.status_code == 200, published.text

    def logs() -> list[dict[str, Any]]:
        return api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]

    # The first poll records the existing task: no run.
    first = wait_until(lambda: cursor(platform, konnect_id).get("initialized") and cursor(platform, konnect_id),
                       timeout=30, what="the first poll")  # fmt: skip
    assert first["seen"] == ["1"] and first["last_error"] is None
    polls = len(tasks.polls)
    wait_until(lambda: len(tasks.polls) >= polls + 2, timeout=20, what="two more polls")
    assert logs() == [] and receiver.requests == []

    tasks.tasks.append({"id": 2, "title": "Write the report"})
    found = wait_until(logs, timeout=30, what="the run of the new task")
    assert len(found) == 1 and found[0]["status"] == "SUCCESS"
    assert found[0]["data"]["node-1"] == {"id": 2, "title": "Write the report"}
    wait_until(lambda: receiver.requests, timeout=20, what="the action of the run")
    assert receiver.requests[0]["body"] == {"note": "New: Write the report"}

    # Later polls find nothing new: no second run.
    polls = len(tasks.polls)
    wait_until(lambda: len(tasks.polls) >= polls + 3, timeout=20, what="three more polls")
    assert len(logs()) == 1 and len(receiver.requests) == 1
    assert cursor(platform, konnect_id)["seen"] == ["1", "2"]


def test_an_app_steps_test_uses_the_account_through_the_credential_broker(platform: Platform, tasks: TasksApp) -> None:
    """Test & Review of an app action runs the runner's step code in the api, which asks the credential
    broker for the account (as a runner does); the broker serves it only to a konnect whose stored
    canvas uses it, so the canvas under test is stored before the step runs."""
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, "tester@example.com", "a-long-password")
    account_id = add_account(api, headers, MANIFEST["id"], {"api_key": KEY})
    trigger = webhook_node("node-1")
    canvas = {"flowName": "Create", "dataForSelect": {}, "apps": [trigger], "links": []}
    konnect_id = test_trigger(api, headers, canvas)  # a draft whose stored canvas has no app step yet
    action = app_node(
        "node-2",
        "ActionNode",
        (MANIFEST["id"], "tasksapp", "Tasks App"),
        2,
        event={"id": "create_task"},
        account={"id": account_id, "name": "Tasks of Ada"},
        config=[{"config_key": "title", "value": "Tested from the editor", "config_key_required": False}],
        x=400,
    )
    canvas = {**canvas, "apps": [trigger, action], "links": [{"source": "node-1", "target": "node-2"}]}
    reply = review_node(api, headers, canvas, "node-2", konnect_id)
    assert reply["test_status"] == "Success", reply
    assert tasks.created[-1]["title"] == "Tested from the editor", tasks.created
