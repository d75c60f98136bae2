from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import select

from konnectz_api import cli
from konnectz_api.crud import quota
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import User
from konnectz_api.services.task_events import store_event
from konnectz_devstack.testing import task_event


def _event(owner_id, konnect_id, steps, run_id=None):
    return task_event(konnect_id, owner_id, steps=steps, **({"run_id": run_id} if run_id else {}))


def test_each_executed_action_counts_once_per_run(client, api):
    _, owner_id, konnect_id = api.owner_and_konnect()
    sessions = get_sessionmaker()
    with sessions() as s:
        assert quota.usage(s, owner_id=owner_id) == (1000, 0)
    event = _event(owner_id, konnect_id, steps=3)
    with sessions() as s:
        assert store_event(s, event) is True
    with sessions() as s:  # a redelivery of the same run is not counted again
        assert store_event(s, event) is False
    with sessions() as s:
        assert quota.usage(s, owner_id=owner_id) == (1000, 3)
        assert quota.usage(s, owner_id=2**62) == (0, 0)

    # Concurrent runs all count (one UPDATE each, no lost updates).
    def store(_):
        with sessions() as s:
            return store_event(s, _event(owner_id, konnect_id, steps=2))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(store, range(40)))
    with sessions() as s:
        assert quota.usage(s, owner_id=owner_id) == (1000, 3 + 80)


def test_plan_set_command(client, api, capsys):
    owned = api.owner_and_konnect()
    email, owner_id = owned.email, owned.owner_id
    assert cli.main(["plan", "set", email.upper(), "team"]) == 0
    assert "plan Team, 10000 tasks" in capsys.readouterr().out
    with get_sessionmaker()() as s:
        assert quota.usage(s, owner_id=owner_id) == (10000, 0)
    assert cli.main(["plan", "set", email, "Gold"]) == 2
    assert "Unknown plan 'Gold'" in capsys.readouterr().err
    assert cli.main(["plan", "set", "nobody@example.com", "Agency"]) == 1
    assert cli.main(["plan", "list"]) == 0
    out = capsys.readouterr().out
    assert "Premium\t25000 tasks\t$99/Year" in out and "Agency\t50000 tasks" in out


def test_plans_usage_and_the_admin_only_endpoint(client, api):
    assert [p["name"] for p in client.get("/api/v1/plans").json()] == ["Free", "Team", "Agency", "Premium"]
    email = api.owner_and_konnect().email
    h = api.login(email)
    assert client.get("/api/v1/users/usage", headers=h).json() == {
        "current_plan": "Free",
        "task_limit": 1000,
        "task_consumed": 0,
        "task_available": 1000,
    }
    body = {"email": email, "plan": "Agency"}
    r = client.post("/api/v1/admin/users/plan", json=body, headers=h)
    assert r.status_code == 403  # is_admin is never taken from sign-up
    admin_email = api.signup_and_verify()
    with get_sessionmaker()() as s:
        s.scalar(select(User).where(User.email == admin_email)).is_admin = True
        s.commit()
    admin = api.login(admin_email)
    r = client.post("/api/v1/admin/users/plan", json=body, headers=admin)
    assert r.status_code == 200 and r.json()["task_limit"] == 50000
    assert client.get("/api/v1/users/usage", headers=h).json()["current_plan"] == "Agency"
    assert client.post("/api/v1/admin/users/plan", json={**body, "plan": "Gold"}, headers=admin).status_code == 422
    r = client.post("/api/v1/admin/users/plan", json={"email": "no-one@example.com", "plan": "Team"}, headers=admin)
    assert r.status_code == 404
    assert client.post("/api/v1/admin/users/plan", json=body).status_code == 401
