"""The hot read routes (flow list, history, folders, task logs, dashboard stats) on the async read pool.

They answer with hand-written SQL and orjson (docs/performance.md); these tests hold them to the ORM
path they replaced: the same reply, byte for byte as JSON, for the same filters on real PostgreSQL,
and the same sign-in rules (a logged-out or cut-off token is refused on the very next call).
"""

import time
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import select

from konnectz_api.consumer import store_events
from konnectz_api.core.config import get_settings
from konnectz_api.crud import folders as folder_crud
from konnectz_api.crud import konnects as konnect_crud
from konnectz_api.crud import task_logs as log_crud
from konnectz_api.crud import task_payloads
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import User
from konnectz_api.routes.konnects import to_items
from konnectz_api.schemas import DashboardStats, FolderList, FolderOut, KonnectList, TaskLogList, TaskLogOut
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


def test_flow_lists_reply_as_the_orm_path(client, account):
    headers, owner_id, ids, folder_id = account
    settings = get_settings()
    today = datetime.now(UTC).date()
    cases = [
        ({}, {}),
        ({"folder": "home"}, {"folder": konnect_crud.HOME}),
        ({"folder": str(folder_id)}, {"folder": folder_id}),
        ({"status": "Published"}, {"status": "Published"}),
        ({"page_size": 2, "page_index": 2}, {"page_size": 2, "page_index": 2}),
        ({"page_index": 9}, {"page_index": 9}),  # past the end: the total is still counted
        ({"start_date": str(today), "end_date": str(today)}, {"start_date": today, "end_date": today}),
        ({"end_date": "2001-01-01"}, {"end_date": date(2001, 1, 1)}),
        ({"search_query": "%"}, {"search": "%"}),  # a LIKE wildcard is taken literally
    ]
    with get_sessionmaker()() as s:
        for params, crud_args in cases:
            args = {"page_size": 20, "page_index": 1, **crud_args}
            page = konnect_crud.list_page(s, owner_id=owner_id, **args)
            expected = KonnectList(konnects=to_items(page, settings), total_konnects=page.total)
            r = client.get("/api/v1/konnects", params=params, headers=headers)
            assert r.status_code == 200 and r.json() == expected.model_dump(mode="json"), params
        for status in (None, "SUCCESS", "ERROR"):
            page = konnect_crud.list_page(s, owner_id=owner_id, page_size=30, page_index=1, log_status=status)
            expected = KonnectList(konnects=to_items(page, settings), total_konnects=page.total)
            r = client.get("/api/v1/task_logs/konnects", params={"status": status} if status else {}, headers=headers)
            assert r.json() == expected.model_dump(mode="json"), status
    listed = client.get("/api/v1/konnects", headers=headers).json()
    assert listed["total_konnects"] == 3
    counts = {k["id"]: (k["success_task_count"], k["error_task_count"]) for k in listed["konnects"]}
    assert counts == {ids[0]: (3, 1), ids[1]: (1, 0), ids[2]: (0, 0)}
    assert client.get("/api/v1/konnects?folder=999999999", headers=headers).status_code == 404


def test_task_logs_folders_and_stats_reply_as_the_orm_path(client, account):
    headers, owner_id, ids, folder_id = account
    with get_sessionmaker()() as s:
        for params in ({"konnect_id": ids[0]}, {"konnect_id": ids[0], "task_log_type": "ERROR"}, {"page_size": 2}):
            args = {"konnect_id": params.get("konnect_id"), "log_type": params.get("task_log_type")}
            page = log_crud.list_logs(s, owner_id=owner_id, page_size=params.get("page_size", 60), page_index=1, **args)
            datas = task_payloads.restore(s, [(r.id, task_payloads.LOG_POSITION, r.data) for r in page.logs])
            expected = TaskLogList(
                task_logs=[
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
                    for r, d in zip(page.logs, datas, strict=True)
                ],
                total=page.total,
            )
            assert client.get("/api/v1/task_logs/logs", params=params, headers=headers).json() == expected.model_dump(
                mode="json"
            )
        folders = folder_crud.list_with_counts(s, owner_id=owner_id)
        stats = konnect_crud.dashboard_stats(s, owner_id=owner_id)
    # The large payload is put back whole.
    big = client.get(f"/api/v1/task_logs/logs?konnect_id={ids[1]}", headers=headers).json()["task_logs"][0]
    assert big["data"]["node-2"] == {"blob": "x" * 5000}
    expected_folders = FolderList(folders=[FolderOut(id=f.id, name=f.name, konnect_count=n) for f, n in folders])
    assert client.get("/api/v1/folders/list", headers=headers).json() == expected_folders.model_dump(mode="json")
    assert expected_folders.folders == [FolderOut(id=folder_id, name="Reads", konnect_count=1)]
    expected_stats = DashboardStats(
        total_konnects=stats.total,
        active_konnects=stats.active,
        inactive_konnects=stats.inactive,
        task_limit=stats.task_limit,
        task_consumed=stats.task_consumed,
        task_available=max(stats.task_limit - stats.task_consumed, 0),
    )
    got = client.get("/api/v1/dashboard/stats", headers=headers).json()
    assert got == expected_stats.model_dump(mode="json")
    assert (got["total_konnects"], got["active_konnects"], got["inactive_konnects"]) == (3, 1, 2)
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
