"""Folders, the flow list's filters, status changes, dashboard stats, flow history and task logs."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from konnectz_api.db import get_sessionmaker
from konnectz_api.models import Konnect, Task, TaskLog

BIG = str(2**64 + 5)


def _save(client, headers, canvas):
    # As the editor does: Test & Review of the trigger creates the konnect, then it is saved.
    tested = client.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": canvas["apps"][0]["id"], "konnect_id": None, "canvas_json": canvas},
        headers=headers,
    )
    assert tested.status_code == 200, tested.text
    r = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": tested.json()["konnect_id"], "canvas_name": True, "canvas_json": canvas, "publish": False},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    return r.json()["konnect_id"]


def _user_id(client, headers) -> int:
    return client.get("/api/v1/users/profile", headers=headers).json()["id"]


def _flows(client, api, headers, names):
    return [_save(client, headers, api.canvas(name=n)) for n in names]


def _add_folder(client, headers, name):
    r = client.post("/api/v1/folders/add", json={"folder_name": name}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "SUCCESS"
    return r.json()["folder"]["id"]


def _folder_of(konnect_id: int) -> int | None:
    with get_sessionmaker()() as s:
        return s.scalar(select(Konnect.folder_id).where(Konnect.id == konnect_id))


def _add_logs(owner_id: int, konnect_id: int, statuses: list[str], when: datetime | None = None) -> list[int]:
    when = when or datetime.now(UTC)
    ids = []
    with get_sessionmaker()() as s:
        for i, st in enumerate(statuses):
            log = TaskLog(
                run_id=uuid.uuid4().hex,
                owner_id=owner_id,
                konnect_id=konnect_id,
                status=st,
                started_at=when,
                task_date=when + timedelta(seconds=i),
                data={"run": i},
            )
            log.tasks = [
                Task(position=0, step_id="node-1", app_name="Webhook", status="SUCCESS", task_date=when, data={"a": 1})
            ]
            s.add(log)
            s.flush()
            ids.append(log.id)
        s.commit()
    return ids


def test_folders_crud_and_assign(client, api):
    h = api.new_user()
    a, b, c, d = _flows(client, api, h, ["Alpha", "Beta", "Gamma", "Delta"])
    assert client.get("/api/v1/folders/list", headers=h).json()["folders"] == []
    f1 = _add_folder(client, h, "  Sales  ")
    f2 = _add_folder(client, h, "Ops")
    folders = client.get("/api/v1/folders/list", headers=h).json()
    assert folders["status"] == "SUCCESS"
    assert [(f["id"], f["name"], f["konnect_count"]) for f in folders["folders"]] == [(f1, "Sales", 0), (f2, "Ops", 0)]

    r = client.put(f"/api/v1/folders/{f1}/rename", json={"folder_name": "Leads"}, headers=h)
    assert r.json() == {
        "status": "SUCCESS",
        "message": "Folder renamed successfully",
        "folder": {"id": f1, "name": "Leads", "konnect_count": 0},
    }

    r = client.post(f"/api/v1/folders/{f1}/assign", json={"konnects": f"{a}, {b},{c}"}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["message"] == "Flows moved successfully" and r.json()["konnects"] == [a, b, c]
    r = client.post(f"/api/v1/folders/{f2}/assign", json={"konnects": str(d)}, headers=h)
    assert r.json()["message"] == "Flow moved successfully"

    listing = client.get(f"/api/v1/folders/{f1}/konnects", headers=h).json()
    assert {k["id"] for k in listing["konnects"]} == {a, b, c} and listing["total_konnects"] == 3
    assert all(k["folder_id"] == f1 for k in listing["konnects"])
    assert client.get("/api/v1/konnects?folder=home", headers=h).json()["total_konnects"] == 0
    assert client.get(f"/api/v1/konnects?folder={f1}", headers=h).json()["total_konnects"] == 3
    assert client.get(f"/api/v1/konnects?folder={f1}&search_query=gam", headers=h).json()["total_konnects"] == 1
    counts = {f["id"]: f["konnect_count"] for f in client.get("/api/v1/folders/list", headers=h).json()["folders"]}
    assert counts == {f1: 3, f2: 1}

    # Removing a folder returns its flows to Home.
    r = client.get(f"/api/v1/folders/{f1}/remove", headers=h)
    assert r.status_code == 200
    assert r.json()["konnects_moved_home"] == 3 and "moved to Home" in r.json()["message"]
    assert _folder_of(a) is None
    home = client.get("/api/v1/konnects?folder=home", headers=h).json()
    assert {k["id"] for k in home["konnects"]} == {a, b, c}
    assert client.get(f"/api/v1/folders/{f1}/konnects", headers=h).status_code == 404
    assert client.get(f"/api/v1/konnects?folder={f1}", headers=h).json()["message"] == "This folder does'nt exist."


def test_assign_is_all_or_nothing_and_owner_scoped(client, api):
    h = api.new_user()
    other = api.new_user()
    mine = _flows(client, api, h, ["One", "Two"])
    theirs = _flows(client, api, other, ["Theirs"])[0]
    f = _add_folder(client, h, "Mine")
    f_other = _add_folder(client, other, "Theirs")

    r = client.post(f"/api/v1/folders/{f}/assign", json={"konnects": f"{mine[0]},{theirs}"}, headers=h)
    assert r.status_code == 404 and r.json()["status"] == "FAILURE" and str(theirs) in r.json()["message"]
    assert _folder_of(mine[0]) is None and _folder_of(theirs) is None  # nothing half-moved

    # Another owner's folder: 404 on every call, nothing changed.
    r = client.post(f"/api/v1/folders/{f_other}/assign", json={"konnects": str(mine[0])}, headers=h)
    assert r.status_code == 404
    assert _folder_of(mine[0]) is None
    r = client.put(f"/api/v1/folders/{f_other}/rename", json={"folder_name": "Hacked"}, headers=h)
    assert r.status_code == 404 and r.json()["status"] == "FAILURE"
    assert client.get(f"/api/v1/folders/{f_other}/remove", headers=h).status_code == 404
    assert client.get(f"/api/v1/folders/{f_other}/konnects", headers=h).status_code == 404
    assert client.get(f"/api/v1/konnects?folder={f_other}", headers=h).status_code == 404
    assert [x["name"] for x in client.get("/api/v1/folders/list", headers=other).json()["folders"]] == ["Theirs"]
    assert [x["name"] for x in client.get("/api/v1/folders/list", headers=h).json()["folders"]] == ["Mine"]

    # A deleted flow cannot be moved.
    client.post(f"/api/v1/konnects/{mine[1]}/update_status", json={"status": "DELETED"}, headers=h)
    assert client.post(f"/api/v1/folders/{f}/assign", json={"konnects": str(mine[1])}, headers=h).status_code == 404


@pytest.mark.parametrize(
    "konnects", ["", "abc", "1,,2", "1;2", "-1", "0", BIG, "1," * 1001 + "1", "1\x002", "99999999999999999999"]
)
def test_assign_refuses_malformed_id_lists(client, api, konnects):
    h = api.new_user()
    k = _flows(client, api, h, ["Only"])[0]
    f = _add_folder(client, h, "F")
    r = client.post(f"/api/v1/folders/{f}/assign", json={"konnects": konnects}, headers=h)
    assert r.status_code == 422, r.text
    assert "konnects" in r.json()["message"]
    assert _folder_of(k) is None


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/api/v1/folders/add", {"folder_name": ""}),
        ("post", "/api/v1/folders/add", {"folder_name": "   "}),
        ("post", "/api/v1/folders/add", {"folder_name": "a\x00b"}),
        ("post", "/api/v1/folders/add", {"folder_name": "x" * 101}),
        ("post", "/api/v1/folders/add", {"folder_name": 5}),
        ("post", "/api/v1/folders/add", {}),
        ("put", f"/api/v1/folders/{BIG}/rename", {"folder_name": "x"}),
        ("get", f"/api/v1/folders/{BIG}/remove", None),
        ("get", f"/api/v1/folders/{BIG}/konnects", None),
        ("get", "/api/v1/folders/abc/konnects", None),
        ("post", f"/api/v1/folders/{BIG}/assign", {"konnects": "1"}),
        ("get", f"/api/v1/konnects?folder={BIG}", None),
        ("get", "/api/v1/konnects?folder=../1", None),
        ("get", "/api/v1/konnects?page_index=1000000000000000000", None),
        ("get", "/api/v1/konnects?page_size=0", None),
        ("get", "/api/v1/konnects?page_size=100000", None),
        ("get", "/api/v1/konnects?search_query=a%00b", None),
        ("get", "/api/v1/konnects?start_date=2024-13-01", None),
        ("get", "/api/v1/konnects?status=Bogus", None),
        ("post", f"/api/v1/konnects/{BIG}/update_status", {"status": "Draft"}),
        ("post", "/api/v1/konnects/1/update_status", {"status": "Archived"}),
        ("get", f"/api/v1/konnects/{BIG}/edit", None),
        ("get", "/api/v1/task_logs/konnects?page_index=1000000000000000000", None),
        ("get", "/api/v1/task_logs/konnects?status=Maybe", None),
        ("get", "/api/v1/task_logs/konnects?start_date=2024-05-02&end_date=2024-05-01", None),
        ("get", "/api/v1/task_logs/search_konnects?search_query=a%00", None),
        ("get", f"/api/v1/task_logs/logs?konnect_id={BIG}", None),
        ("get", "/api/v1/task_logs/logs?start_date=yesterday", None),
        ("get", "/api/v1/task_logs/logs?task_log_type=WARN", None),
        ("get", f"/api/v1/task_logs/{BIG}/tasks", None),
    ],
)
def test_hostile_input_gets_a_clear_4xx(client, api, method, path, body):
    h = api.new_user()
    kwargs = {"json": body} if body is not None else {}
    r = getattr(client, method)(path, headers=h, **kwargs)
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    assert r.json()["message"]


def test_field_named_in_validation_errors(client, api):
    h = api.new_user()
    r = client.get("/api/v1/task_logs/logs?start_date=yesterday", headers=h)
    assert r.status_code == 422 and "start_date" in r.json()["message"]
    r = client.get("/api/v1/konnects?page_index=1000000000000000000", headers=h)
    assert "page_index" in r.json()["message"]


def test_huge_bodies_are_refused(client, api):
    h = api.new_user()
    r = client.post("/api/v1/folders/add", content=b"{" + b" " * (3 * 1024 * 1024) + b"}", headers=h)
    assert r.status_code == 413 and "larger than" in r.json()["message"]


def test_search_escapes_like_wildcards(client, api):
    h = api.new_user()
    _flows(client, api, h, ["Sales 100% done", "Plain flow", "snake_case flow"])
    q = lambda s: client.get("/api/v1/konnects", params={"search_query": s}, headers=h).json()  # noqa: E731
    assert q("%%")["total_konnects"] == 0
    assert [k["konnect_name"] for k in q("0%")["konnects"]] == ["Sales 100% done"]
    assert q("__")["total_konnects"] == 0
    assert [k["konnect_name"] for k in q("e_c")["konnects"]] == ["snake_case flow"]
    assert q("\\\\")["total_konnects"] == 0
    assert q("p")["total_konnects"] == 3  # one character: no search
    hist = client.get("/api/v1/task_logs/search_konnects", params={"search_query": "%%"}, headers=h).json()
    assert hist["total_konnects"] == 0


def test_konnect_list_filters_and_paging(client, api):
    h = api.new_user()
    ids = _flows(client, api, h, [f"Flow {i:02d}" for i in range(25)])
    old = ids[0]
    with get_sessionmaker()() as s:
        s.execute(update(Konnect).where(Konnect.id == old).values(created_at=datetime(2021, 3, 4, 12, tzinfo=UTC)))
        s.commit()
    client.post(f"/api/v1/konnects/{ids[1]}/update_status", json={"status": "DELETED"}, headers=h)
    page1 = client.get("/api/v1/konnects?page_size=20&page_index=1", headers=h).json()
    page2 = client.get("/api/v1/konnects?page_size=20&page_index=2", headers=h).json()
    assert page1["total_konnects"] == 24 and len(page1["konnects"]) == 20 and len(page2["konnects"]) == 4
    assert page1["konnects"][0]["id"] == ids[-1]  # newest first
    assert page2["konnects"][-1]["id"] == old
    assert ids[1] not in {k["id"] for k in page1["konnects"] + page2["konnects"]}
    r = client.get("/api/v1/konnects?start_date=2021-03-04&end_date=2021-03-04", headers=h).json()
    assert [k["id"] for k in r["konnects"]] == [old]
    r = client.get("/api/v1/konnects?end_date=2021-03-03", headers=h).json()
    assert r["total_konnects"] == 0
    assert client.get("/api/v1/konnects?status=Published", headers=h).json()["total_konnects"] == 0
    assert client.get("/api/v1/konnects?status=Draft", headers=h).json()["total_konnects"] == 24
    assert client.get("/api/v1/konnects?page_index=99999", headers=h).json()["konnects"] == []


def test_update_status_publish_draft_delete_and_stats(client, api):
    h = api.new_user()
    other = api.new_user()
    a, b, c = _flows(client, api, h, ["A", "B", "C"])
    stats = client.get("/api/v1/dashboard/stats", headers=h).json()
    assert stats == {
        "total_konnects": 3,
        "active_konnects": 0,
        "inactive_konnects": 3,
        "task_limit": 1000,
        "task_consumed": 0,
        "task_available": 1000,
    }
    r = client.post(f"/api/v1/konnects/{a}/update_status", json={"status": "Published"}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json() == {
        "status": "SUCCESS",
        "message": "SUCCESS",
        "details": "Flow published",
        "konnect_id": a,
        "konnect_status": "Published",
    }
    stats = client.get("/api/v1/dashboard/stats", headers=h).json()
    assert (stats["active_konnects"], stats["inactive_konnects"]) == (1, 2)

    # Another owner cannot change it.
    r = client.post(f"/api/v1/konnects/{a}/update_status", json={"status": "DELETED"}, headers=other)
    assert r.status_code == 404
    assert client.get(f"/api/v1/konnects/{a}/edit", headers=h).json()["status"] == "Published"

    r = client.post(f"/api/v1/konnects/{a}/update_status", json={"status": "Draft"}, headers=h)
    assert r.json()["details"] == "Flow withdrawn from the runners and saved as draft"
    r = client.post(f"/api/v1/konnects/{b}/update_status", json={"status": "DELETED"}, headers=h)
    assert r.json()["message"] == "SUCCESS" and r.json()["details"] == "Flow deleted"
    # Deleting twice: the flow is gone.
    r = client.post(f"/api/v1/konnects/{b}/update_status", json={"status": "DELETED"}, headers=h)
    assert r.status_code == 404 and r.json()["message"] != "SUCCESS"
    stats = client.get("/api/v1/dashboard/stats", headers=h).json()
    assert (stats["total_konnects"], stats["active_konnects"], stats["inactive_konnects"]) == (2, 0, 2)
    assert client.get("/api/v1/dashboard/stats", headers=other).json()["total_konnects"] == 0
    assert client.get("/api/v1/dashboard/stats").status_code == 401
    assert c


def test_history_and_task_logs(client, api):
    h = api.new_user()
    other = api.new_user()
    uid = _user_id(client, h)
    ok_flow, err_flow, quiet = _flows(client, api, h, ["Orders ok", "Orders err", "Quiet"])
    ok_logs = _add_logs(uid, ok_flow, ["SUCCESS", "SUCCESS", "ERROR"], datetime(2024, 5, 1, 9, tzinfo=UTC))
    _add_logs(uid, err_flow, ["ERROR"], datetime(2024, 6, 1, 9, tzinfo=UTC))

    hist = client.get("/api/v1/task_logs/konnects", headers=h).json()
    assert hist["total_konnects"] == 3
    counts = {k["id"]: (k["success_task_count"], k["error_task_count"]) for k in hist["konnects"]}
    assert counts == {ok_flow: (2, 1), err_flow: (0, 1), quiet: (0, 0)}
    assert client.get("/api/v1/task_logs/konnects?status=SUCCESS", headers=h).json()["konnects"][0]["id"] == ok_flow
    err = client.get("/api/v1/task_logs/konnects?status=ERROR", headers=h).json()
    assert {k["id"] for k in err["konnects"]} == {ok_flow, err_flow}
    today = datetime.now(UTC).date().isoformat()
    assert (
        client.get(f"/api/v1/task_logs/konnects?start_date={today}&end_date={today}", headers=h).json()[
            "total_konnects"
        ]
        == 3
    )
    assert client.get("/api/v1/task_logs/konnects?end_date=2020-01-01", headers=h).json()["total_konnects"] == 0
    found = client.get("/api/v1/task_logs/search_konnects?search_query=orders", headers=h).json()
    assert {k["id"] for k in found["konnects"]} == {ok_flow, err_flow}
    assert client.get("/api/v1/task_logs/konnects?page_size=2&page_index=2", headers=h).json()["konnects"][0]["id"] == (
        ok_flow
    )
    assert client.get("/api/v1/task_logs/konnects", headers=other).json()["total_konnects"] == 0

    logs = client.get(f"/api/v1/task_logs/logs?konnect_id={ok_flow}&task_log_type=SUCCESS", headers=h).json()
    assert logs["total"] == 2 and [x["id"] for x in logs["task_logs"]] == [ok_logs[1], ok_logs[0]]
    logs = client.get("/api/v1/task_logs/logs?start_date=2024-06-01&end_date=2024-06-30", headers=h).json()
    assert logs["total"] == 1 and logs["task_logs"][0]["konnect_id"] == err_flow
    paged = client.get(f"/api/v1/task_logs/logs?konnect_id={ok_flow}&page_size=1&page_index=3", headers=h).json()
    assert [x["id"] for x in paged["task_logs"]] == [ok_logs[0]]
    # Another owner's konnect or task log: 404.
    assert client.get(f"/api/v1/task_logs/logs?konnect_id={ok_flow}", headers=other).status_code == 404
    tasks = client.get(f"/api/v1/task_logs/{ok_logs[0]}/tasks", headers=h).json()["tasks"]
    assert [t["app_name"] for t in tasks] == ["Webhook"]
    assert client.get(f"/api/v1/task_logs/{ok_logs[0]}/tasks", headers=other).status_code == 404
    # The flow list carries the same counts.
    listing = client.get("/api/v1/konnects", headers=h).json()
    assert {k["id"]: k["success_task_count"] for k in listing["konnects"]}[ok_flow] == 2
    # Past the last page the totals still come (counted apart from the empty page).
    past = client.get(f"/api/v1/task_logs/logs?konnect_id={ok_flow}&page_size=2&page_index=9", headers=h).json()
    assert past == {"task_logs": [], "total": 3}
    assert client.get("/api/v1/konnects?page_size=2&page_index=9", headers=h).json()["total_konnects"] == 3
    # A deleted flow's runs go with it: 404, like another owner's.
    r = client.post(f"/api/v1/konnects/{err_flow}/update_status", json={"status": "DELETED"}, headers=h)
    assert r.status_code == 200, r.text
    assert client.get(f"/api/v1/task_logs/logs?konnect_id={err_flow}", headers=h).status_code == 404
