"""The hot read routes (flow list, history, folders, task logs, dashboard stats) on the async read pool.

They answer with hand-written SQL (:mod:`konnectz_api.crud.reads`, the only implementation of these
reads) and orjson (docs/performance.md); these tests hold their replies to the account's data on real
PostgreSQL for each filter, the short path (:mod:`konnectz_api.fastreads`) to the routes it serves, and
the sign-in rules (a logged-out or cut-off token is refused on the very next call).
"""

import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from konnectz_api.compile.live_trigger import live_trigger
from konnectz_api.core.config import get_settings
from konnectz_api.crud import task_payloads
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import Konnect, TaskLog, User
from konnectz_api.schemas import (
    DashboardStats,
    FolderList,
    FolderOut,
    KonnectItem,
    LeftApp,
    RightApp,
    TaskLogList,
    TaskLogOut,
)
from konnectz_api.services.task_events import store_events
from konnectz_devstack.testing import task_event

READ_PATHS = (
    "/api/v1/konnects",
    "/api/v1/folders/list",
    "/api/v1/dashboard/stats",
    "/api/v1/task_logs/konnects",
    "/api/v1/task_logs/search_konnects?search_query=ab",
    "/api/v1/task_logs/logs",
)


def _event(konnect_id, owner_id, **more):
    return task_event(konnect_id, owner_id, name="Read flow", **more)


@pytest.fixture
def account(client, api):
    """A user with three flows (one in a folder, one published), runs of both outcomes, and one run
    whose data was kept apart as a large payload."""
    email = api.signup_and_verify()
    headers = api.login(email)
    ids = [api.save_konnect(headers, api.canvas()).json()["konnect_id"] for _ in range(3)]
    folder_id = client.post("/api/v1/folders/add", json={"folder_name": "Reads"}, headers=headers).json()["folder"][
        "id"
    ]
    assert client.post(f"/api/v1/folders/{folder_id}/assign", json={"konnects": str(ids[1])}, headers=headers).json()[
        "status"
    ] == ("SUCCESS")
    client.post(f"/api/v1/konnects/{ids[2]}/update_status", json={"status": "Published"}, headers=headers)
    with get_sessionmaker()() as s:
        owner_id = s.scalar(select(User.id).where(User.email == email))
        events = [_event(ids[0], owner_id) for _ in range(3)] + [_event(ids[0], owner_id, status="ERROR")]
        events.append(_event(ids[1], owner_id, output={"blob": "x" * 5000}))
        assert all(store_events(s, events, inline_limit=1024))
    return headers, owner_id, ids, folder_id


def _item(konnect: Konnect, counts: tuple[int, int, int], settings) -> dict:
    """The list item of one flow, from its stored row (its app names are derived on write)."""
    live = (konnect.published_spec or {}).get("trigger") if konnect.status == "Published" else None
    kind, schedule = live_trigger(live)
    ok, err, filtered = counts
    return KonnectItem(
        id=konnect.id,
        konnect_name=konnect.konnect_name,
        status=konnect.status,
        created_at=konnect.created_at,
        success_task_count=ok,
        error_task_count=err,
        filtered_task_count=filtered,
        left_app=LeftApp(name=konnect.app_names["left"]) if konnect.app_names["left"] else None,
        right_apps=[RightApp(app_name=n) for n in konnect.app_names["right"]],
        webhook_url=f"{settings.webhook_base_url.rstrip('/')}/hooks/{konnect.webhook_token}",
        trigger_kind=kind,
        schedule=schedule,
        draft_pending=konnect.draft_pending,
        folder_id=konnect.folder_id,
    ).model_dump(mode="json")


def test_flow_lists_reply_with_the_filtered_page(client, account):
    """The flow list and the history list (crud.reads) for each filter: which flows, in which order,
    the filtered total, and every field of each item."""
    headers, _owner_id, ids, folder_id = account
    settings = get_settings()
    today = datetime.now(UTC).date()
    counts = {ids[0]: (3, 1, 0), ids[1]: (1, 0, 0), ids[2]: (0, 0, 0)}
    with get_sessionmaker()() as s:
        items = {k.id: _item(k, counts[k.id], settings) for k in s.scalars(select(Konnect).where(Konnect.id.in_(ids)))}
    newest_first = [ids[2], ids[1], ids[0]]
    cases = [
        ({}, newest_first, 3),
        ({"folder": "home"}, [ids[2], ids[0]], 2),
        ({"folder": str(folder_id)}, [ids[1]], 1),
        ({"status": "Published"}, [ids[2]], 1),
        ({"status": "Draft"}, [ids[1], ids[0]], 2),
        ({"page_size": 2, "page_index": 2}, [ids[0]], 3),
        ({"page_index": 9}, [], 3),  # past the end: the total is still counted
        ({"start_date": str(today), "end_date": str(today)}, newest_first, 3),
        ({"end_date": "2001-01-01"}, [], 0),
        ({"search_query": "%"}, newest_first, 3),  # one character is no search
        ({"search_query": "fl%"}, [], 0),  # a LIKE wildcard is taken literally
        ({"search_query": "FLOW"}, newest_first, 3),  # any case
    ]
    for params, listed, total in cases:
        r = client.get("/api/v1/konnects", params=params, headers=headers)
        assert r.status_code == 200 and r.json() == {
            "konnects": [items[i] for i in listed],
            "total_konnects": total,
        }, params
    for status, listed in ((None, newest_first), ("SUCCESS", [ids[1], ids[0]]), ("ERROR", [ids[0]])):
        r = client.get("/api/v1/task_logs/konnects", params={"status": status} if status else {}, headers=headers)
        assert r.json() == {"konnects": [items[i] for i in listed], "total_konnects": len(listed)}, status
    # A folder's own list is the same read.
    r = client.get(f"/api/v1/folders/{folder_id}/konnects", headers=headers)
    assert r.json() == {"konnects": [items[ids[1]]], "total_konnects": 1}
    assert client.get("/api/v1/folders/999999999/konnects", headers=headers).status_code == 404
    listed = client.get("/api/v1/konnects", headers=headers).json()
    assert listed["total_konnects"] == 3
    got = {k["id"]: (k["success_task_count"], k["error_task_count"]) for k in listed["konnects"]}
    assert got == {ids[0]: (3, 1), ids[1]: (1, 0), ids[2]: (0, 0)}
    assert client.get("/api/v1/konnects?folder=999999999", headers=headers).status_code == 404


def test_task_logs_folders_and_stats_reply_with_the_account_data(client, account):
    headers, owner_id, ids, folder_id = account
    with get_sessionmaker()() as s:
        rows = s.scalars(
            select(TaskLog).where(TaskLog.owner_id == owner_id).order_by(TaskLog.task_date.desc(), TaskLog.id.desc())
        ).all()
        datas = task_payloads.restore(s, [(r.id, task_payloads.LOG_POSITION, r.data) for r in rows])
        logs = [
            TaskLogOut(
                id=r.id,
                konnect_id=r.konnect_id,
                status=r.status,
                task_date=r.task_date,
                data=d,
                run_id=r.run_id,
                attempts=r.attempts,
                replay_of=r.replay_of,
            )
            for r, d in zip(rows, datas, strict=True)
        ]
        user = s.get(User, owner_id)
        assert user is not None
        task_limit, task_consumed = user.task_limit, user.task_consumed
    first = [log for log in logs if log.konnect_id == ids[0]]
    cases = [
        ({"konnect_id": ids[0]}, first, 4),
        ({"konnect_id": ids[0], "task_log_type": "ERROR"}, [log for log in first if log.status == "ERROR"], 1),
        ({"page_size": 2}, logs[:2], 5),
    ]
    for params, expected, total in cases:
        reply = client.get("/api/v1/task_logs/logs", params=params, headers=headers).json()
        assert reply == TaskLogList(task_logs=expected, total=total).model_dump(mode="json"), params
    # The large payload is put back whole.
    big = client.get(f"/api/v1/task_logs/logs?konnect_id={ids[1]}", headers=headers).json()["task_logs"][0]
    assert big["data"]["node-2"] == {"blob": "x" * 5000}
    expected_folders = FolderList(folders=[FolderOut(id=folder_id, name="Reads", konnect_count=1)])
    assert client.get("/api/v1/folders/list", headers=headers).json() == expected_folders.model_dump(mode="json")
    expected_stats = DashboardStats(
        total_konnects=3,
        active_konnects=1,
        inactive_konnects=2,
        task_limit=task_limit,
        task_consumed=task_consumed,
        task_available=max(task_limit - task_consumed, 0),
    )
    got = client.get("/api/v1/dashboard/stats", headers=headers).json()
    assert got == expected_stats.model_dump(mode="json")
    # Another owner's flow: 404, as before.
    other = client.get(f"/api/v1/task_logs/logs?konnect_id={ids[0] + 10**9}", headers=headers)
    assert other.status_code == 404


def test_read_routes_refuse_a_logged_out_or_cut_off_token_at_once(client, api):
    email = api.signup_and_verify()
    first, second = api.login(email), api.login(email)
    for path in READ_PATHS:
        assert client.get(path, headers=first).status_code == 200, path
    assert client.post("/api/v1/users/logout", headers=first).status_code == 200
    for path in READ_PATHS:
        r = client.get(path, headers=first)
        assert r.status_code == 401 and r.json()["message"] == "Your session has expired. Please sign in again.", path
        assert client.get(path, headers=second).status_code == 200, path
        assert client.get(path).status_code == 401
    time.sleep(1.1)  # token issue times are whole seconds
    body = {"current_password": "s3cret-pass", "password": "n3w-password", "password_confirmation": "n3w-password"}
    fresh = client.post("/api/v1/users/change_password", json=body, headers=second).json()["auth_token"]
    for path in READ_PATHS:
        assert client.get(path, headers=second).status_code == 401, path
        assert client.get(path, headers={"Authorization": f"Bearer {fresh}"}).status_code == 200, path


def test_read_routes_refuse_a_deleted_user_and_expired_tokens(client, api, api_env):
    from konnectz_api.core.security import create_access_token

    secret = api_env["KONNECTZ_SECRET_KEY"]
    gone = create_access_token(user_id=2**62, secret=secret, lifetime=timedelta(minutes=5))
    expired = create_access_token(user_id=1, secret=secret, lifetime=timedelta(seconds=-5))
    for path in READ_PATHS:
        for token in (gone, expired, "x"):
            assert client.get(path, headers={"Authorization": f"Bearer {token}"}).status_code == 401, path


def test_the_lists_show_app_names_derived_when_the_canvas_is_written(client, api):
    """konnects.app_names follows canvas_json on every write; a row written without the ORM (NULL)
    is still listed with the names of its canvas."""
    from sqlalchemy import text

    from konnectz_devstack.testing import api_call_node, webhook_canvas

    headers = api.login(api.signup_and_verify())
    canvas = webhook_canvas("http://127.0.0.1:9/x")
    konnect_id = api.save_konnect(headers, canvas).json()["konnect_id"]

    def listed() -> dict:
        items = client.get("/api/v1/konnects", headers=headers).json()["konnects"]
        return {k["id"]: (k["left_app"], k["right_apps"]) for k in items}

    assert listed()[konnect_id] == ({"name": "Webhook"}, [{"app_name": "API Call"}])
    # The canvas changes (a second action): the names follow.
    third = api_call_node("http://127.0.0.1:9/y", node_id="node-3")
    third["data"]["app_detail"]["name"] = "Second Call"
    canvas["apps"].append(third)
    canvas["links"].append({"id": "e2", "source": "node-2", "target": "node-3"})
    saved = client.post(
        "/api/v1/konnects/save_konnect",
        json={"canvas_json": canvas, "canvas_name": True, "konnect_id": konnect_id},
        headers=headers,
    )
    assert saved.status_code == 200, saved.text
    assert listed()[konnect_id] == ({"name": "Webhook"}, [{"app_name": "API Call"}, {"app_name": "Second Call"}])
    with get_sessionmaker()() as s:
        stored = s.execute(text("SELECT app_names FROM konnects WHERE id = :k"), {"k": konnect_id}).scalar_one()
        assert stored == {"left": "Webhook", "right": ["API Call", "Second Call"]}
        s.execute(text("UPDATE konnects SET app_names = NULL WHERE id = :k"), {"k": konnect_id})
        s.commit()
    assert listed()[konnect_id] == ({"name": "Webhook"}, [{"app_name": "API Call"}, {"app_name": "Second Call"}])
    history = client.get("/api/v1/task_logs/konnects", headers=headers).json()["konnects"]
    assert [k["right_apps"] for k in history if k["id"] == konnect_id] == [
        [{"app_name": "API Call"}, {"app_name": "Second Call"}]
    ]


def test_the_hot_reads_take_the_short_path_and_anything_unusual_the_full_one(client, account, monkeypatch):
    """konnectz_api.fastreads serves the six hot GETs without FastAPI's machinery when all is well,
    and hands everything else (bad parameters, no token, a 404) to the full application, whose
    replies are the ones the other tests check."""
    from konnectz_api import fastreads

    headers, _owner_id, ids, _folder_id = account
    middleware = client.app.middleware_stack
    while not isinstance(middleware, fastreads.FastReads):
        middleware = middleware.app
    assert set(middleware.plans()) == fastreads.HOT_PATHS  # no hot route fell back to the full path unnoticed
    served: list[bool] = []
    serve = fastreads.FastReads._serve

    async def spy(self, plan, scope, receive):
        response = await serve(self, plan, scope, receive)
        served.append(response is not None)
        return response

    monkeypatch.setattr(fastreads.FastReads, "_serve", spy)
    for path in READ_PATHS:
        assert client.get(path, headers=headers).status_code == 200, path
    assert served == [True] * len(READ_PATHS)

    served.clear()
    unusual = [
        ("/api/v1/konnects?page_size=0", headers, 422),
        ("/api/v1/konnects?page_index=1000000000000000000", headers, 422),
        ("/api/v1/konnects?folder=999999999", headers, 404),
        ("/api/v1/task_logs/logs?start_date=2026-02-30", headers, 422),
        ("/api/v1/task_logs/logs?start_date=2026-02-02&end_date=2026-02-01", headers, 422),
        ("/api/v1/folders/list", {}, 401),
        ("/api/v1/folders/list", {"Authorization": "Basic abc"}, 401),
        ("/api/v1/dashboard/stats", {"Authorization": "Bearer not-a-token"}, 401),
    ]
    for path, with_headers, status in unusual:
        r = client.get(path, headers=with_headers)
        assert r.status_code == status, (path, r.text)
        assert r.json().get("message") or r.json().get("detail"), (path, r.text)
    assert served == [False] * len(unusual)
    # A dependency overridden (as tests do) makes the short path step aside for that route.
    deployer = client.app.state.deployer
    client.app.dependency_overrides[fastreads.deps.get_deployer] = lambda: deployer
    try:
        served.clear()
        assert client.get("/api/v1/konnects", headers=headers).status_code == 200
        assert served == [False]
        assert client.get("/api/v1/folders/list", headers=headers).status_code == 200
        assert served == [False, True]  # the routes without that dependency still take the short path
    finally:
        client.app.dependency_overrides.pop(fastreads.deps.get_deployer)
    assert client.get(f"/api/v1/task_logs/logs?konnect_id={ids[0]}", headers=headers).json()["total"] == 4


def test_the_short_path_uses_no_fastapi_internals():
    """konnectz_api.fastreads reads the routes through public interfaces (the route's path, methods and
    endpoint, the endpoint's signature; pydantic validates the query): FastAPI's dependency internals
    (``fastapi.dependencies``, ``route.dependant``, ``request_params_to_args``) change between releases."""
    import ast
    import inspect

    from konnectz_api import fastreads

    tree = ast.parse(inspect.getsource(fastreads))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    assert not {m for m in imported if m and (m.startswith("fastapi.dependencies") or m.startswith("fastapi._"))}
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
    }
    assert not names & {"dependant", "request_params_to_args", "solve_dependencies", "get_dependant"}
