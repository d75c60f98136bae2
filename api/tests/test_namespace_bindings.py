"""Namespace bindings, administered: the admin API (administrators only, named by the installer) and the
CLI ``python -m konnectz_api namespace bind|unbind|list`` (konnectz_api.crud.namespace_bindings; the
import they govern: test_cluster_sync.py and tests/k8s/test_cluster_truth.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import delete, update

from konnectz_api.core.config import get_settings
from konnectz_api.crud import members
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import NamespaceBinding, User

URL = "/api/v1/admin/namespace_bindings"
NOT_AN_ADMINISTRATOR = (
    "Only an administrator can bind namespaces. The installer names administrators with "
    "KONNECTZ_ADMIN_EMAILS or `python -m konnectz_api admin grant <email>`."
)


@pytest.fixture(autouse=True)
def no_bindings(client) -> Iterator[None]:
    def clear() -> None:
        with get_sessionmaker()() as session:
            session.execute(delete(NamespaceBinding))
            session.commit()

    clear()
    yield
    clear()


def _admin(api) -> dict[str, str]:
    email = api.signup_and_verify()
    with get_sessionmaker()() as session:
        session.execute(update(User).where(User.email == email).values(is_admin=True))
        session.commit()
    return api.login(email)


def test_only_an_administrator_binds_lists_or_unbinds(client, api):
    owner = api.signup_and_verify()
    user = api.login(owner)  # the account's own owner is not an administrator either
    for method, url, body in (
        ("get", URL, None),
        ("put", f"{URL}/team-a", {"owner_email": owner}),
        ("delete", f"{URL}/team-a", None),
    ):
        r = client.request(method, url, json=body, headers=user)
        assert r.status_code == 403, (method, r.text)
        assert r.json()["message"] == NOT_AN_ADMINISTRATOR
    assert client.put(f"{URL}/team-a", json={"owner_email": owner}).status_code == 401
    with get_sessionmaker()() as session:
        assert session.get(NamespaceBinding, "team-a") is None


def test_an_administrator_binds_lists_and_unbinds_a_namespace(client, api):
    admin, owner = _admin(api), api.signup_and_verify()
    r = client.put(f"{URL}/team-a", json={"owner_email": owner.upper()}, headers=admin)
    assert r.status_code == 200, r.text
    assert r.json() | {"bound_at": None} == {
        "namespace": "team-a", "owner_email": owner, "source": "administrator", "bound_at": None, "pending": "",
    }  # fmt: skip
    (listed,) = client.get(URL, headers=admin).json()
    assert listed["namespace"] == "team-a" and listed["owner_email"] == owner

    # Not an account holder: an unknown e-mail, a team member (bind their account), a bad namespace name.
    assert client.put(f"{URL}/team-b", json={"owner_email": "nobody@example.com"}, headers=admin).status_code == 404
    with get_sessionmaker()() as session:
        account = session.query(User).filter(User.email == owner).one()
        member = members.add_member(
            session, owner=account, kind="team", email=f"m-{owner}", first_name="M", last_name="", access="FULL",
            task=None,
        ).email  # fmt: skip
    r = client.put(f"{URL}/team-b", json={"owner_email": member}, headers=admin)
    assert r.status_code == 422 and r.json()["message"] == (
        f"{member} is a team member: bind the namespace to the account they work in ({owner})"
    )
    assert client.put(f"{URL}/Team_B", json={"owner_email": owner}, headers=admin).status_code == 422

    r = client.delete(f"{URL}/team-a", headers=admin)
    assert r.status_code == 200 and "imported flows keep running" in r.json()["message"]
    assert client.get(URL, headers=admin).json() == []
    assert client.delete(f"{URL}/team-a", headers=admin).status_code == 404


def test_the_environments_binding_is_listed_and_not_changed_by_hand(client, api, monkeypatch):
    admin, owner = _admin(api), api.signup_and_verify()
    monkeypatch.setenv("KONNECTZ_NAMESPACE_BINDINGS", f"team-env={owner},team-later=later@example.com")
    get_settings.cache_clear()
    try:
        from konnectz_api.crud import namespace_bindings

        with get_sessionmaker()() as session:
            assert namespace_bindings.apply_configured(session, get_settings().namespace_bindings, prune=True) == [
                "namespace team-later: No user with e-mail later@example.com"
            ]
        rows = {r["namespace"]: r for r in client.get(URL, headers=admin).json()}
        assert rows["team-env"]["source"] == "environment" and rows["team-env"]["pending"] == ""
        assert rows["team-later"]["pending"] == "No user with e-mail later@example.com"
        r = client.delete(f"{URL}/team-env", headers=admin)
        assert r.status_code == 409 and "KONNECTZ_NAMESPACE_BINDINGS" in r.json()["message"]
        assert client.put(f"{URL}/team-env", json={"owner_email": owner}, headers=admin).status_code == 409
    finally:
        monkeypatch.delenv("KONNECTZ_NAMESPACE_BINDINGS")
        get_settings.cache_clear()


def test_the_namespace_command_binds_lists_and_unbinds(client, api, capsys):
    from konnectz_api.cli import main

    owner = api.signup_and_verify()
    assert main(["namespace", "list"]) == 0
    assert capsys.readouterr().out == (
        "No namespace is bound: an administrator binds it with `python -m konnectz_api namespace bind "
        "<namespace> <owner-email>` (or the admin API, or the chart value namespaceBindings).\n"
    )
    assert main(["namespace", "bind", "team-a", owner.upper()]) == 0
    assert capsys.readouterr().out == f"team-a: bound to the account of {owner}\n"
    assert main(["namespace", "list"]) == 0
    assert capsys.readouterr().out == f"team-a\t{owner}\tbound here\tbound\n"
    assert main(["namespace", "bind", "team-b", "nobody@example.invalid"]) == 1
    assert "No user with e-mail nobody@example.invalid" in capsys.readouterr().err
    assert main(["namespace", "unbind", "team-a"]) == 0
    assert capsys.readouterr().out.startswith("team-a: unbound (new Konnects there are refused")
    assert main(["namespace", "unbind", "team-a"]) == 0
    assert capsys.readouterr().out == "team-a: not bound\n"
    assert main(["namespace", "list"]) == 0
    assert capsys.readouterr().out.startswith("No namespace is bound")
