"""Plan caps and bounded lists (real PostgreSQL, the api in process).

A Free account keeps at most ``PLANS["Free"].folders`` folders and ``.konnects`` flows (deleted ones
do not count); the next creation is a 403 ``PLAN_LIMIT`` that names the plan and the cap, and a larger
plan lifts it. ``GET /folders/list`` answers at most ``MAX_LISTED`` folders in the spec's shape, even
for an account that made 10,005 before the caps.
"""

from sqlalchemy import func, insert, select, update

from konnectz_api.crud.quota import MAX_LISTED, PLANS, set_plan
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import Folder, Konnect, User


def _owner(api):
    email = api.signup_and_verify()
    headers = api.login(email)
    with get_sessionmaker()() as s:
        owner_id = s.scalar(select(User.id).where(User.email == email))
    return email, headers, owner_id


def _add_folders(owner_id, n):
    with get_sessionmaker()() as s:
        s.execute(insert(Folder), [{"owner_id": owner_id, "name": f"f{i}"} for i in range(n)])
        s.commit()


def test_folders_are_capped_by_the_plan_and_a_larger_plan_lifts_the_cap(client, api):
    email, headers, owner_id = _owner(api)
    free = PLANS["Free"]
    _add_folders(owner_id, free.folders - 1)
    last = client.post("/api/v1/folders/add", json={"folder_name": "last"}, headers=headers)
    assert last.status_code == 200 and last.json()["status"] == "SUCCESS"
    over = client.post("/api/v1/folders/add", json={"folder_name": "one too many"}, headers=headers)
    assert over.status_code == 403
    assert over.json() == {
        "message": f"The Free plan allows {free.folders} folders; delete some or choose a larger plan to add more.",
        "key": "PLAN_LIMIT",
        "status": "FAILURE",
    }
    with get_sessionmaker()() as s:
        assert s.scalar(select(func.count()).select_from(Folder).where(Folder.owner_id == owner_id)) == free.folders
        set_plan(s, email=email, plan="Team")
    assert client.post("/api/v1/folders/add", json={"folder_name": "team"}, headers=headers).status_code == 200


def test_flows_are_capped_by_the_plan_and_deleted_ones_do_not_count(client, api):
    _email, headers, owner_id = _owner(api)
    free = PLANS["Free"]
    canvas = api.canvas()
    with get_sessionmaker()() as s:
        rows = [
            {"owner_id": owner_id, "status": "Draft", "canvas_json": canvas, "webhook_token": f"t{owner_id}x{i}" * 3,
             "konnect_name": f"k{i}"}
            for i in range(free.konnects)
        ]  # fmt: skip
        s.execute(insert(Konnect), rows)
        s.commit()
    body = {"node_id": canvas["apps"][0]["id"], "konnect_id": None, "canvas_json": canvas}
    over = client.post("/api/v1/konnects/test_and_review", json=body, headers=headers)
    assert over.status_code == 403 and over.json()["key"] == "PLAN_LIMIT"
    assert f"allows {free.konnects} flows" in over.json()["message"]
    with get_sessionmaker()() as s:  # one deleted: room for one more
        one = s.scalar(select(Konnect.id).where(Konnect.owner_id == owner_id).limit(1))
        s.execute(update(Konnect).where(Konnect.id == one).values(status="DELETED"))
        s.commit()
    assert client.post("/api/v1/konnects/test_and_review", json=body, headers=headers).status_code == 200
    assert client.post("/api/v1/konnects/test_and_review", json=body, headers=headers).status_code == 403


def test_the_folder_list_is_bounded_and_keeps_its_shape(client, api):
    _email, headers, owner_id = _owner(api)
    _add_folders(owner_id, 10_005)  # made before the caps existed
    reply = client.get("/api/v1/folders/list", headers=headers)
    assert reply.status_code == 200
    body = reply.json()
    assert set(body) == {"status", "message", "folders"} and body["status"] == "SUCCESS"
    assert len(body["folders"]) == MAX_LISTED < 10_005
    ids = [f["id"] for f in body["folders"]]
    assert ids == sorted(ids) and set(body["folders"][0]) == {"id", "name", "konnect_count"}
