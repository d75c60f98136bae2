"""Helpers the cross-component tests share: waiting, signing up and in, and editor-shaped canvases.

The tests run in pytest's importlib mode, where test modules cannot import each other; these live
in the devstack package (a test-support package already) so each test module imports them.
Every helper takes an ``httpx.Client`` (or Starlette's TestClient, which has the same API) whose
base URL is the api.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from konnectz_contracts.nats_auth import RUNNER
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._platform import http_problem
from konnectz_devstack._ports import free_port

__all__ = [
    "add_account",
    "api_call_node",
    "api_call_settings",
    "app_node",
    "canvas_node",
    "capture_request",
    "chain_canvas",
    "child_pids",
    "delay_canvas",
    "publish_and_run",
    "publish_canvas",
    "publish_konnect",
    "review_node",
    "sign_in",
    "sign_in_through_form",
    "sign_up",
    "start_runner_process",
    "task_event",
    "test_trigger",
    "text_box",
    "uuid_generator_node",
    "wait_until",
    "webhook_canvas",
    "webhook_node",
]

T = TypeVar("T")


def wait_until(
    fn: Callable[[], T],
    timeout: float = 30.0,
    interval: float = 0.1,
    what: str = "condition",
    retry_on: tuple[type[Exception], ...] = (),
) -> T:
    """Call ``fn`` until it returns something truthy; that value, or AssertionError after ``timeout`` s.
    An exception of ``retry_on`` (a 404 of a resource not made yet) counts as not yet."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = fn()
        except retry_on as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(interval)
    raise AssertionError(f"{what} not met in {timeout} s (last: {last!r})")


def webhook_node(node_id: str = "node-1") -> dict[str, Any]:
    return canvas_node(
        node_id,
        "WebhookInner",
        "webhook",
        1,
        "Webhook",
        x=0,
        selectedEvent={"id": "catch_hook", "name": "Catch Webhook"},
        configResponses=[],
    )


def api_call_node(
    url: str,
    *,
    node_id: str = "node-2",
    method: str = "POST",
    headers: list[dict[str, str]] | None = None,
    params: list[dict[str, str]] | None = None,
    body: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    return canvas_node(
        node_id,
        "Api",
        "api",
        2,
        "API Call",
        x=600,
        selectedEvent={"id": "api_call", "name": "Make an API Call"},
        selectedValue=api_call_settings(
            url,
            method=method,
            headers=headers,
            params=params,
            body=body if body is not None else [{"key": "customer", "value": "{{node-1.name}}"}],
        ),
    )


def api_call_settings(
    url: str,
    *,
    method: str = "POST",
    headers: list[dict[str, str]] | None = None,
    params: list[dict[str, str]] | None = None,
    body: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """An API call step's ``selectedValue`` as the editor saves it: a JSON request to ``url``."""
    return {
        "wrap_in_array": "NO",
        "payload_type": "JSON",
        "apiDetails": {
            "method": method,
            "endpointURL": url,
            "headers": headers or [],
            "params": params or [],
            "body": body or [],
        },
    }


def uuid_generator_node(node_id: str = "node-2") -> dict[str, Any]:
    """A Generator step (after the trigger) making a UUID: a step Test & Review runs offline."""
    return {
        "id": node_id,
        "type": "Generator",
        "position": {"x": 600, "y": 0},
        "data": {
            "node_id": node_id,
            "app_detail": {"id": 9, "name": "Generator", "provider": "generator", "app_type": "ADD_ON", "app_index": 2},
            "configResponses": [{"config_key": "type", "value": "uuid"}],
        },
    }


def canvas_node(
    node_id: str, type_: str, provider: str, index: int, name: str, *, x: int | None = None, **data: Any
) -> dict[str, Any]:
    """One node as the editor saves it: React Flow type ``type_`` of app ``provider`` at position
    ``index`` (1 = the trigger, on the left; drawn at ``x``, 500 per index unless given); ``data`` adds
    its sections (configResponses, …)."""
    return {
        "id": node_id,
        "type": type_,
        "position": {"x": 500 * index if x is None else x, "y": 0},
        "data": {
            "node_id": node_id,
            "app_detail": {
                "id": index,
                "name": name,
                "provider": provider,
                "app_type": "WEBHOOK" if provider == "webhook" else "ADD_ON",
                "app_index": index,
                "side": "left" if index == 1 else "right",
            },
            **data,
        },
    }


def app_node(
    node_id: str,
    type_: str,
    app: tuple[int, str, str],
    index: int,
    *,
    event: dict[str, Any],
    account: dict[str, Any],
    config: list[dict[str, Any]],
    x: int,
) -> dict[str, Any]:
    """One step of a catalogue app as the editor saves it: ``app`` is its (id, provider, name), the
    step is React Flow type ``type_`` at position ``index``, drawn at ``x``, with ``event`` chosen,
    the connected ``account`` and ``config`` (its configResponses)."""
    app_id, provider, name = app
    node = canvas_node(
        node_id, type_, provider, index, name, x=x, selectedEvent=event, selectedAccount=account, configResponses=config
    )
    node["data"]["app_detail"].update(id=app_id, app_type="api")
    return node


def chain_canvas(apps: list[dict[str, Any]], name: str, order: list[str] | None = None) -> dict[str, Any]:
    """canvas_json of ``apps`` linked one after another in ``order`` (their node ids; default: as listed)."""
    ids = order if order is not None else [app["id"] for app in apps]
    links = [{"id": f"e{i}", "source": a, "target": b} for i, (a, b) in enumerate(itertools.pairwise(ids))]
    return {"apps": apps, "links": links, "dataForSelect": {}, "flowName": name}


def webhook_canvas(
    url: str, *, name: str = "My flow", trigger: dict[str, Any] | None = None, **api_details: Any
) -> dict[str, Any]:
    """canvas_json of a two-node flow as the editor saves it: a trigger (Webhook unless given) → API call."""
    first = trigger if trigger is not None else webhook_node()
    return {
        "apps": [first, api_call_node(url, **api_details)],
        "links": [{"id": "e1", "source": first["id"], "target": "node-2", "sourceHandle": None, "targetHandle": None}],
        "dataForSelect": {},
        "flowName": name,
    }


def delay_canvas(url: str, name: str) -> dict[str, Any]:
    """canvas_json of flow ``name``: Webhook -> API call (``url``/before) -> Delay 1 hour -> API call
    (``url``/after), both calls posting ``n`` of the webhook's request."""
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook",
                    selectedEvent={"id": "catch_hook", "name": "Catch Webhook"}, configResponses=[]),
        api_call_node(url + "/before", node_id="node-2", body=[{"key": "n", "value": "{{node-1.n}}"}]),
        canvas_node("node-3", "InHouse", "delay", 3, "Delay",
                    timerConfigs={"delay_type": 515, "delay_unit": 322, "delay_value": 1}),
        api_call_node(url + "/after", node_id="node-4", body=[{"key": "n", "value": "{{node-1.n}}"}]),
    ]  # fmt: skip
    apps[1]["position"]["x"], apps[3]["position"]["x"] = 1000, 2000
    return chain_canvas(apps, name)


def review_node(
    api: Any, headers: dict[str, str], canvas: dict[str, Any], node_id: str, konnect_id: int | None = None
) -> dict[str, Any]:
    """Test & Review of one node of ``canvas`` (asserting a 200): its reply. The trigger's first test
    (``konnect_id`` None) creates the draft, as the editor does."""
    r = api.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": node_id, "konnect_id": konnect_id, "canvas_json": canvas},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    reply: dict[str, Any] = r.json()
    return reply


def capture_request(api: Any, headers: dict[str, str], konnect_id: int, hook: str, payload: dict[str, Any]) -> None:
    """The editor's capture of a webhook trigger: WAITING, then ``payload`` posted to ``hook`` is caught."""
    capture = f"/api/v1/konnect_webhooks/capture_webhook_response/{konnect_id}"
    assert api.post(capture, headers=headers).json()["message"] == "WAITING"

    def posted() -> Any:
        # An absolute URL: the runner. It learns of the open window by its watch of KZ_CAPTURING, a
        # moment after the api stored it: until then the draft's token is unknown there (404).
        reply = api.post(hook, json=payload)
        return None if reply.status_code == 404 else reply

    reply = wait_until(posted, timeout=10, what="the runner to see the capture window")
    assert reply.json() == {"status": "captured"}, reply.text
    assert api.post(capture, headers=headers).json()["raw_response"] == payload


def test_trigger(api: Any, headers: dict[str, str], canvas: dict[str, Any], konnect_id: int | None = None) -> int:
    """Test & Review of the canvas's trigger, as the editor does before saving: the konnect's id."""
    return int(review_node(api, headers, canvas, canvas["apps"][0]["id"], konnect_id)["konnect_id"])


test_trigger.__test__ = False  # type: ignore[attr-defined]  # a helper, not a pytest test


def publish_canvas(api: Any, headers: dict[str, str], canvas: dict[str, Any]) -> dict[str, Any]:
    """Test & Review of the trigger (it creates the draft, as the editor does), then publish: the
    publish reply (``konnect_id``, ``webhook_url``, ...)."""
    return publish_konnect(api, headers, test_trigger(api, headers, canvas), canvas)


def publish_konnect(api: Any, headers: dict[str, str], konnect_id: int, canvas: dict[str, Any]) -> dict[str, Any]:
    """Publish the draft ``konnect_id`` (its trigger tested already) as ``canvas`` (asserting a 200):
    the publish reply."""
    r = api.post(
        "/api/v1/konnects/publish_konnect",
        headers=headers,
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas},
    )
    assert r.status_code == 200, r.text
    return dict(r.json())


def publish_and_run(
    api: Any, headers: dict[str, str], konnect_id: int, canvas: dict[str, Any], hook: str, payload: dict[str, Any]
) -> list[dict[str, Any]]:
    """Publish the draft ``konnect_id`` as ``canvas``, post ``payload`` to its webhook ``hook`` until
    the runner accepts it, and wait for the run's task log: the konnect's task logs, once listed."""
    import httpx  # the devstack does not depend on httpx; the tests that use this helper do

    publish_konnect(api, headers, konnect_id, canvas)
    assert wait_until(lambda: httpx.post(hook, json=payload).json().get("status") == "accepted")

    def logs() -> list[dict[str, Any]]:
        return api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]

    found: list[dict[str, Any]] = wait_until(logs)
    return found


def task_event(
    konnect_id: int,
    owner_id: int,
    *,
    name: str = "Flow",
    status: str = "SUCCESS",
    steps: int = 1,
    step_status: str | None = None,
    output: Any = None,
    **update: Any,
) -> Any:
    """The runner's TaskEvent of one run of konnect ``konnect_id`` (a new run id): the trigger
    (node-1) gave ``{"n": 1}``, then ``steps`` steps (node-2, node-3, ..., each 3 ms long, in
    ``step_status``, by default the run's ``status``) answered ``output`` (by default ``{"ok": i}``,
    i their index); ``update`` sets other fields (trace_id, attempts, ...)."""
    from konnectz_contracts.events import (  # import-ok: the devstack does not depend on the contracts
        StepResult,
        TaskEvent,
    )

    now = datetime.now(UTC)
    results = [
        StepResult(
            step_id=f"node-{i + 2}",
            name=f"Step {i}",
            status=step_status or status,
            started_at=now,
            finished_at=now + timedelta(milliseconds=3),
            input={"i": i},
            output=output if output is not None else {"ok": i},
        )
        for i in range(steps)
    ]
    event = TaskEvent(
        run_id=uuid.uuid4().hex,
        konnect_id=konnect_id,
        owner_id=owner_id,
        konnect_name=name,
        status=status,
        started_at=now,
        finished_at=now,
        trigger_id="node-1",
        trigger_output={"n": 1},
        steps=results,
    )
    return event.model_copy(update=update)


def list_calls(konnect_id: int, task_log_id: int) -> list[str]:
    """Every list call the pages make for a user with a flow and a task log (fault tests read them all)."""
    return [
        "/api/v1/konnects?page_size=20&page_index=1",
        "/api/v1/folders/list",
        "/api/v1/dashboard/stats",
        "/api/v1/task_logs/konnects?page_size=30&page_index=1",
        f"/api/v1/task_logs/logs?konnect_id={konnect_id}&page_size=60&page_index=1",
        f"/api/v1/task_logs/{task_log_id}/tasks",
        f"/api/v1/konnects/{konnect_id}/edit",
        "/api/v1/users/profile",
        "/api/v1/users/usage",
        "/api/v1/apps?page_size=20",
        "/api/v1/members/audit_log",
    ]


def sign_in(api: Any, email: str, password: str) -> dict[str, str]:
    """Sign in with a solved captcha; the Authorization header."""
    from konnectz_api.services.captcha import solve  # import-ok: the devstack does not depend on the api package

    challenge = api.get("/api/v1/captcha/challenge").json()
    r = api.post(
        "/api/v1/auth/login",
        json={"email": email, "password": password, "rememberMe": True, "captcha": solve(challenge)},
    )
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['auth_token']}"}


def sign_up(api: Any, email: str, password: str, first_name: str = "Test") -> dict[str, str]:
    """Sign up, confirm by the link in the dev mailbox, sign in; the Authorization header."""
    body = {"email": email, "first_name": first_name, "last_name": "User", "password": password}
    r = api.post("/api/v1/signup", json={**body, "password_confirmation": password})
    assert r.status_code == 201, r.text
    mail = wait_until(
        lambda: [m for m in api.get("/dev/mail.json").json() if m["to"] == email], what="the verification mail"
    )
    found = re.search(r"/verify-email/(\S+)", mail[0]["text"])
    assert found is not None, mail[0]["text"]
    confirmed = api.post("/api/v1/users/email_confirmation", json={"confirmation_token": found.group(1)})
    assert confirmed.json()["key"] == "VERIFY_EMAIL_SUCCESS", confirmed.text
    return sign_in(api, email, password)


def add_account(api: Any, headers: dict[str, str], app_id: int, auth_response: dict[str, Any]) -> int:
    """Connect an account of app ``app_id`` with ``auth_response`` (its fields, e.g. ``{"api_key": ...}``),
    asserting a 200: the account's id (``app_user_id``)."""
    r = api.post("/api/v1/authorization", json={"app_id": app_id, "auth_response": auth_response}, headers=headers)
    assert r.status_code == 200, r.text
    return int(r.json()["app_user_id"])


def sign_in_through_form(page: Any, email: str, password: str) -> None:
    """Sign in on the SPA's /login page as a person does (a Playwright page): email, password, the
    ALTCHA widget's proof of work, Login; returns on /dashboard."""
    from playwright.sync_api import expect

    page.goto("/login")
    page.get_by_test_id("login-email").fill(email)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-captcha").get_by_text("I'm not a robot").click()
    expect(
        page.locator("altcha-widget [data-state=verified], altcha-widget .altcha[data-state=verified]")
    ).to_have_count(1, timeout=60_000)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url("**/dashboard")


def text_box(page: Any, test_id: str) -> Any:
    """The text box behind a test id (on the input itself, or on a wrapper around it)."""
    loc = page.get_by_test_id(test_id)
    if loc.evaluate("e => ['INPUT', 'TEXTAREA'].includes(e.tagName)"):
        return loc
    return loc.locator("textarea, input").first


@contextlib.contextmanager
def served_api(env: dict[str, str], log: Path, *, timeout: float = 90) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The api as its own process (``python -m konnectz_api serve`` on a free loopback port, as `make dev`
    runs it) with ``env`` added to this process's environment, its output in ``log``; its base URL and
    process once ``/healthz`` answers 200. Terminated on exit."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "konnectz_api", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"

    try:
        wait_until(lambda: http_problem(f"{base}/healthz") is None, timeout=timeout, what="the api answers")
        yield base, proc
    finally:
        proc.terminate()
        proc.wait(15)


def stop_process(proc: subprocess.Popen[Any], timeout: float, what: str) -> None:
    """SIGTERM ``proc`` and wait ``timeout`` seconds for it to exit. One that does not is a defect, not a
    slow machine: it is asked for its asyncio tasks' stacks (SIGUSR2) and its threads' stacks (SIGUSR1: the
    runner registers faulthandler on it) first; they go to its stderr, which the test's report shows; then it
    is killed, and the test fails saying so."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            proc.send_signal(signal.SIGUSR2)
        time.sleep(1)
        with contextlib.suppress(OSError):
            proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        proc.kill()
        proc.wait(10)
        stuck = f"{what} did not stop within {timeout:.0f} s of SIGTERM; its stacks are in its stderr"
        raise AssertionError(stuck) from None


def child_pids(pid: int) -> list[int]:
    """The ids of the processes whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


async def start_runner_process(nats: NatsServer, spec_file: Path, port: int, log: Path) -> asyncio.subprocess.Process:
    """``python -m konnectz_runner serve`` in spec-file mode (``spec_file``) on ``port``, its output
    appended to ``log``: the process, once its /healthz answers 200 (AssertionError if it exits or
    does not answer in 30 s). No api here: quotas are off (they are tested in test_quota.py)."""
    import httpx  # the devstack does not depend on httpx; the runner's tests that use this helper do

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "konnectz_runner", "serve", "--host", "127.0.0.1", "--port", str(port),
        env={**os.environ, **nats.env(RUNNER), "KONNECTZ_SPEC_FILE": str(spec_file),
             "KONNECTZ_ENFORCE_QUOTA": "false", "KONNECTZ_ALLOW_PRIVATE_NETWORKS": "127.0.0.0/8"},
        stdout=log.open("ab"), stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    async with httpx.AsyncClient(timeout=2) as http:
        for _ in range(300):
            try:
                if (await http.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200:
                    return proc
            except httpx.TransportError:
                pass
            assert proc.returncode is None, "the runner exited early; see " + str(log)
            await asyncio.sleep(0.1)
    raise AssertionError(f"the runner did not start; see {log}")
