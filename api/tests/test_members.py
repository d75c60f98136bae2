"""Members: team access levels enforced on every call, agency sub-accounts with quotas, reseller members,
the audit log; strangers and each access level walk the members endpoints."""

import asyncio
import re

import nats
from nats.js.errors import KeyNotFoundError
from sqlalchemy import select

from konnectz_api.crud import quota
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import User
from konnectz_contracts.events import KV_KONNECTS, konnect_key

M = "/api/v1/members"


def _owner(api, plan):
    email = api.signup_and_verify()
    with get_sessionmaker()() as s:
        quota.set_plan(s, email=email, plan=plan)
    return email, api.login(email)


def _join(client, api, email, password="member-pass-1"):
    """Follow the invitation link, set a password, sign in as the member."""
    text = api.mail_to(email)[-1]["text"]
    token = re.search(r"/reset-password/(\S+)", text).group(1)
    body = {"reset_password_token": token, "password": password, "password_confirmation": password}
    assert client.post("/api/v1/users/update_user_password", json=body).json()["key"] == "PASSWORD_UPDATED"
    return api.login(email, password)


def _save(client, api, headers):
    r = api.save_konnect(headers, api.canvas())  # tests the trigger first, as the editor does
    assert r.status_code == 200, r.text
    return r.json()["konnect_id"]


def _konnect_ids(client, headers):
    return {k["id"] for k in client.get("/api/v1/konnects", headers=headers).json()["konnects"]}


def test_other_plans_get_feature_not_available(client, api):
    _, free = _owner(api, "Free")
    for path in ("list_team_users", "list_agency_users", "list_reseller_users"):
        r = client.get(f"{M}/{path}", headers=free)
        assert r.status_code == 403 and r.json()["message"] == "This feature is not available for Free"
    _, team = _owner(api, "Team")
    r = client.get(f"{M}/list_agency_users", headers=team)
    assert r.json()["message"] == "This feature is not available for Team"
    body = {"email": "x@example.com", "first_name": "X", "task": 5}
    assert client.post(f"{M}/add_agency_user", json=body, headers=team).status_code == 403
    assert client.get(f"{M}/list_team_users").status_code == 401


def test_team_member_access_levels_are_enforced_on_every_call(client, api):
    owner_email, owner = _owner(api, "Team")
    owner_flow = _save(client, api, owner)
    member_email = f"create-{owner_email}"
    r = client.post(
        f"{M}/add_team_user",
        json={"email": member_email, "first_name": "Cre", "last_name": "Ate", "access": "Create"},
        headers=owner,
    )
    assert r.status_code == 200, r.text
    member_id = r.json()["member"]["id"]
    assert r.json()["member"] == {
        "id": member_id, "name": "Cre Ate", "first_name": "Cre", "last_name": "Ate", "email": member_email,
        "access": "Create", "task": None, "task_consumed": None, "remaining": None,
    }  # fmt: skip
    listed = client.get(f"{M}/list_team_users", headers=owner).json()
    assert [u["email"] for u in listed["team_users"]] == [member_email] and listed["total"] == 1

    member = _join(client, api, member_email)
    # The member works in the owner's account: sees and creates the owner's flows ...
    assert owner_flow in _konnect_ids(client, member)
    member_flow = _save(client, api, member)
    assert member_flow in _konnect_ids(client, owner)
    # ... but with access Create cannot delete one.
    r = client.post(f"/api/v1/konnects/{owner_flow}/update_status", json={"status": "DELETED"}, headers=member)
    assert r.status_code == 403 and r.json()["key"] == "ACCESS_DENIED"
    assert "(Create) does not allow you to delete" in r.json()["message"]
    assert owner_flow in _konnect_ids(client, owner)
    # Members never manage members, and only FULL reads the audit log.
    assert client.get(f"{M}/list_team_users", headers=member).status_code == 403
    assert client.get(f"{M}/audit_log", headers=member).status_code == 403
    body = {"email": "evil@example.com", "first_name": "E", "access": "FULL"}
    assert client.post(f"{M}/add_team_user", json=body, headers=member).status_code == 403
    # Their own profile is theirs, not the owner's.
    assert client.get("/api/v1/users/profile", headers=member).json()["email"] == member_email
    client.post("/api/v1/users/profile", json={"first_name": "Renamed"}, headers=member)
    assert client.get("/api/v1/users/profile", headers=owner).json()["first_name"] == "Ada"

    # Create/Delete may delete.
    r = client.post(
        f"{M}/update_team_user", json={"sub_account_id": member_id, "access": "Create/Delete"}, headers=owner
    )
    assert r.json()["member"]["access"] == "Create/Delete"
    r = client.post(f"/api/v1/konnects/{member_flow}/update_status", json={"status": "DELETED"}, headers=member)
    assert r.status_code == 200, r.text
    assert member_flow not in _konnect_ids(client, owner)
    assert client.get(f"{M}/audit_log", headers=member).status_code == 403

    # FULL reads the audit log: who, what, when, from where, allowed or denied.
    client.post(f"{M}/update_team_user", json={"sub_account_id": member_id, "access": "FULL"}, headers=owner)
    log = client.get(f"{M}/audit_log", headers=member).json()
    assert log == client.get(f"{M}/audit_log", headers=owner).json()
    actions = [(e["action"], e["outcome"]) for e in log["entries"]]
    assert (f"POST /api/v1/konnects/{owner_flow}/update_status status=DELETED", "denied") in actions
    assert (f"POST /api/v1/konnects/{member_flow}/update_status status=DELETED", "allowed") in actions
    assert ("POST /api/v1/konnects/save_konnect", "allowed") in actions
    assert ("GET /api/v1/members/list_team_users", "denied") in actions
    assert {e["actor_email"] for e in log["entries"]} == {member_email}
    assert all(e["address"] and e["created_at"] for e in log["entries"])

    # A stranger (another Team account) can neither see, change nor remove this member.
    _, stranger = _owner(api, "Team")
    assert client.get(f"{M}/list_team_users", headers=stranger).json()["team_users"] == []
    r = client.post(f"{M}/update_team_user", json={"sub_account_id": member_id, "access": "Create"}, headers=stranger)
    assert r.status_code == 404
    assert client.get(f"{M}/remove_team_user?sub_account_id={member_id}", headers=stranger).status_code == 404
    assert client.get(f"{M}/audit_log", headers=stranger).json()["total"] == 0

    # Removing the member ends their sessions.
    assert client.get(f"{M}/remove_team_user?sub_account_id={member_id}", headers=owner).status_code == 200
    assert client.get("/api/v1/konnects", headers=member).status_code == 401
    assert client.get(f"{M}/list_team_users", headers=owner).json()["total"] == 0


def test_hostile_member_input_gets_clear_4xx(client, api):
    owner_email, owner = _owner(api, "Team")
    for query in ("sub_account_id=" + str(2**70), "sub_account_id=-1", "sub_account_id=abc", ""):
        assert client.get(f"{M}/remove_team_user?{query}", headers=owner).status_code == 422
    bad = [
        {"email": "a@example.com", "first_name": "A\x00", "access": "Create"},
        {"email": "a@example.com", "first_name": "A", "access": "Owner"},
        {"email": "not-an-email", "first_name": "A", "access": "Create"},
        {"email": "a@example.com", "first_name": "A" * 101, "access": "Create"},
        {"first_name": "A", "access": "Create"},
    ]
    for body in bad:
        assert client.post(f"{M}/add_team_user", json=body, headers=owner).status_code == 422, body
    r = client.post(
        f"{M}/add_team_user", json={"email": owner_email, "first_name": "A", "access": "FULL"}, headers=owner
    )
    assert r.status_code == 400 and "already exists" in r.json()["message"]
    r = client.post(f"{M}/add_team_user", json={"email": "n@example.com", "access": "FULL"}, headers=owner)
    assert r.status_code == 400
    assert client.get(f"{M}/audit_log?page_index=1000000000000000000", headers=owner).status_code == 422


def _published(nats_url, konnect_id):
    """Whether the runners' KZ_KONNECTS bucket holds the konnect (the LocalDeployer's publish)."""

    async def check():
        nc = await nats.connect(nats_url)
        try:
            kv = await nc.jetstream().key_value(KV_KONNECTS)
            try:
                entry = await kv.get(konnect_key(konnect_id))
            except KeyNotFoundError:
                return False
            return entry.value is not None and entry.operation is None
        finally:
            await nc.close()

    return asyncio.run(check())


def test_agency_sub_accounts_have_their_own_quota(client, api, nats_server):
    agency_email, agency = _owner(api, "Agency")  # 50,000 tasks
    sub_email = f"sub-{agency_email}"
    r = client.post(f"{M}/add_agency_user", json={"email": sub_email, "name": "Sub Account", "task": 3}, headers=agency)
    assert r.status_code == 200, r.text
    sub_id = r.json()["member"]["id"]
    assert r.json()["member"]["first_name"] == "Sub" and r.json()["member"]["remaining"] == 3
    r = client.post(
        f"{M}/add_agency_user", json={"email": "big@example.com", "name": "B", "task": 50_000}, headers=agency
    )
    assert (
        r.status_code == 400
        and r.json()["message"] == "Only 49997 of your 50000 tasks are left to give to sub-accounts."
    )
    listed = client.get(f"{M}/list_agency_users", headers=agency).json()
    keys = ("total_tasks", "task_consumed", "total_subaccounts", "allowed_subaccount_limit")
    assert [listed[k] for k in keys] == [50000, 0, 1, 10]
    assert [(s["email"], s["task"], s["task_consumed"], s["remaining"]) for s in listed["sub_accounts"]] == [
        (sub_email, 3, 0, 3)
    ]

    # The sub-account signs in and runs against its own quota, not the agency's.
    sub = _join(client, api, sub_email)
    assert client.get(f"{M}/list_agency_users", headers=sub).json()["message"] == (
        "This feature is not available for Sub-account"
    )
    flow = _save(client, api, sub)
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": flow, "canvas_name": True, "canvas_json": api.canvas()},
        headers=sub,
    )
    assert r.status_code == 200, r.text
    assert _published(nats_server.admin_url, flow) is True
    assert flow not in _konnect_ids(client, agency)
    with get_sessionmaker()() as s:
        sub_id_db = s.scalar(select(User.id).where(User.email == sub_email))
        assert sub_id_db == sub_id
        assert quota.reserve(s, run_id="sub-1", konnect_id=flow, owner_id=sub_id, tasks=2).allowed
        refused = quota.reserve(s, run_id="sub-2", konnect_id=flow, owner_id=sub_id, tasks=2)
        assert not refused.allowed and "only 1 of the 3 tasks of the Sub-account plan remain" in (refused.reason or "")
    row = client.get(f"{M}/list_agency_users", headers=agency).json()["sub_accounts"][0]
    assert (row["task_consumed"], row["remaining"]) == (2, 1)
    r = client.post(f"{M}/update_agency_user", json={"sub_account_id": sub_id, "task": 1}, headers=agency)
    assert r.status_code == 400 and "already used 2 tasks" in r.json()["message"]
    r = client.post(f"{M}/update_agency_user", json={"sub_account_id": sub_id, "task": 10}, headers=agency)
    assert r.json()["member"]["remaining"] == 8
    # A team endpoint cannot touch an agency sub-account, nor can another agency.
    _, other = _owner(api, "Agency")
    assert client.get(f"{M}/remove_agency_user?sub_account_id={sub_id}", headers=other).status_code == 404
    assert client.get(f"{M}/remove_agency_user?sub_account_id={sub_id}", headers=agency).json()["message"] == (
        "Member removed"
    )
    assert client.get(f"{M}/list_agency_users", headers=agency).json()["total_subaccounts"] == 0
    assert _published(nats_server.admin_url, flow) is False  # its published flow was stopped first
    assert client.get("/api/v1/konnects", headers=sub).status_code == 401


def test_reseller_members_and_the_sub_account_limit(client, api):
    _, agency = _owner(api, "Agency")
    ids = []
    for i in range(10):
        body = {"email": f"r{i}-{id(ids)}@example.com", "first_name": f"R{i}", "task": 100}
        r = client.post(f"{M}/add_reseller_user", json=body, headers=agency)
        assert r.status_code == 200, r.text
        ids.append(r.json()["member"]["id"])
    r = client.post(
        f"{M}/add_agency_user", json={"email": "eleven@example.com", "first_name": "E", "task": 1}, headers=agency
    )
    assert r.status_code == 400 and r.json()["message"] == "You have reached your limit of 10 sub-accounts."
    listed = client.get(f"{M}/list_reseller_users", headers=agency).json()
    assert listed["total"] == 10 and listed["reseller_users"][0]["task"] == 100
    assert client.get(f"{M}/list_agency_users", headers=agency).json()["total_subaccounts"] == 10
    r = client.post(f"{M}/update_reseller_user", json={"sub_account_id": ids[0], "first_name": "Re"}, headers=agency)
    assert r.json()["member"]["name"] == "Re"
    # An agency id is not a reseller id for the reseller endpoints of someone else, nor the team endpoints.
    assert client.get(f"{M}/remove_team_user?sub_account_id={ids[0]}", headers=agency).status_code == 403
    assert client.get(f"{M}/remove_reseller_user?sub_account_id={ids[0]}", headers=agency).status_code == 200
    assert client.get(f"{M}/list_reseller_users", headers=agency).json()["total"] == 9


def test_each_access_level_walks_every_members_and_profile_endpoint(client, api):
    owner_email, owner = _owner(api, "Team")
    calls = [
        ("get", f"{M}/list_team_users", None),
        ("post", f"{M}/add_team_user", {"email": "x1@example.com", "first_name": "X", "access": "FULL"}),
        ("post", f"{M}/update_team_user", {"sub_account_id": 1, "access": "FULL"}),
        ("get", f"{M}/remove_team_user?sub_account_id=1", None),
        ("get", f"{M}/list_agency_users", None),
        ("post", f"{M}/add_agency_user", {"email": "x2@example.com", "first_name": "X", "task": 1}),
        ("post", f"{M}/update_agency_user", {"sub_account_id": 1, "task": 1}),
        ("get", f"{M}/remove_agency_user?sub_account_id=1", None),
        ("get", f"{M}/list_reseller_users", None),
        ("post", f"{M}/add_reseller_user", {"email": "x3@example.com", "first_name": "X", "task": 1}),
        ("post", f"{M}/update_reseller_user", {"sub_account_id": 1, "task": 1}),
        ("get", f"{M}/remove_reseller_user?sub_account_id=1", None),
    ]
    for i, access in enumerate(("Create", "Create/Delete", "FULL")):
        email = f"walk{i}-{owner_email}"
        r = client.post(f"{M}/add_team_user", json={"email": email, "first_name": "W", "access": access}, headers=owner)
        assert r.status_code == 200, r.text
        member = _join(client, api, email)
        for method, path, body in calls:
            r = client.request(method.upper(), path, json=body, headers=member)
            assert r.status_code == 403 and r.json()["key"] == "ACCESS_DENIED", (access, path, r.text)
        assert (client.get(f"{M}/audit_log", headers=member).status_code == 200) is (access == "FULL")
        # Their own profile: read and change it, never the owner's.
        assert client.get("/api/v1/users/profile", headers=member).json()["email"] == email
        r = client.post("/api/v1/users/profile", json={"last_name": access}, headers=member)
        assert r.status_code == 200 and r.json()["profile"]["last_name"] == access
        assert client.get("/api/v1/users/profile/options", headers=member).status_code == 200
        body = {
            "current_password": "member-pass-1",
            "password": "member-pass-2",
            "password_confirmation": "member-pass-2",
        }
        assert client.post("/api/v1/users/change_password", json=body, headers=member).json()["key"] == "UPDATE_SUCCESS"
    assert client.get("/api/v1/users/profile", headers=owner).json()["last_name"] == "L"
    assert client.get(f"{M}/list_team_users", headers=owner).json()["total"] == 3
