"""The api follows the cluster's Konnects (cluster_sync.py), with the Kubernetes API in memory.

PostgreSQL is real (the api's test database); tests/k8s/test_cluster_truth.py runs the same
against a real API server, operator and runner. A Konnect applied with kubectl is imported only from
a namespace bound to an account, for its owner or a member who may publish
(konnectz_api.crud.namespace_bindings): the tests bind the fake's namespace first.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import delete, func, select

from konnectz_api.crud import namespace_bindings
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import AuditEntry, Konnect, NamespaceBinding, User
from konnectz_api.services.cluster_sync import ClusterSync
from konnectz_contracts.resource import GROUP, VERSION, last_run_status, refused_status


class FakeCustomObjects:
    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}

    def list_namespaced_custom_object(self, group, version, namespace, plural, **_: Any) -> dict[str, Any]:
        return {"items": [copy.deepcopy(i) for i in self.items.values()], "metadata": {"resourceVersion": "1"}}

    def get_namespaced_custom_object(self, group, version, namespace, plural, name, **_: Any) -> dict[str, Any]:
        return copy.deepcopy(self.items[name])

    def patch_namespaced_custom_object_status(self, group, version, namespace, plural, name, body, **_: Any) -> None:
        self.items[name].setdefault("status", {}).update(body["status"])

    def patch_namespaced_custom_object(self, group, version, namespace, plural, name, body, **_: Any) -> None:
        """A merge patch of the metadata's annotations (``None`` removes one): all the api writes besides
        what it applies (spec, labels); the status is the operator's."""
        assert set(body) == {"metadata"} and set(body["metadata"]) == {"annotations"}, body
        annotations = self.items[name]["metadata"].setdefault("annotations", {})
        for key, value in body["metadata"]["annotations"].items():
            if value is None:
                annotations.pop(key, None)
            else:
                annotations[key] = value


def shown(item: dict[str, Any]) -> dict[str, Any]:
    """What the operator shows in a Konnect's status for the api's refusal (``konnectz.io/refused``)."""
    assert "phase" not in (item.get("status") or {}), "the api writes no status"
    return refused_status(item["metadata"].get("annotations"))


class FakeDeployer:
    namespace = "konnectz"

    def __init__(self) -> None:
        self._api = FakeCustomObjects()
        self.tokens: dict[str, str] = {}
        self.names: dict[int, str] = {}
        self.bound: dict[str, tuple[int, str]] = {}

    def remember(self, konnect_id: int, name: str) -> None:
        self.names[konnect_id] = name

    def forget(self, konnect_id: int, name: str) -> None:
        if self.names.get(konnect_id) == name:
            del self.names[konnect_id]

    def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        live = self._api.items[body["metadata"]["name"]]
        live["metadata"].setdefault("labels", {}).update(body["metadata"].get("labels") or {})
        for key, value in body["spec"].items():
            live["spec"][key] = {**live["spec"].get(key, {}), **value} if isinstance(value, dict) else value
        return copy.deepcopy(live)

    def apply_token(self, name: str, token: str, owner_uid: str) -> None:
        assert owner_uid == "uid-" + name
        self.tokens[name] = token

    def bind(self, name: str, konnect_id: int, uid: str, annotations: dict[str, Any] | None) -> None:
        assert self._api.items[name]["metadata"]["uid"] == uid  # only the recorded resource is bound
        self.bound[name] = (konnect_id, uid)


def applied(name: str, owner: str | None, url: str = "https://crm.example.com/contacts") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "konnectz", "uid": "uid-" + name}
    if owner is not None:
        meta["annotations"] = {"konnectz.io/owner": owner}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Konnect",
        "metadata": meta,
        "spec": {
            "displayName": "From Git",
            "trigger": {"kind": "webhook"},
            "flow": {
                "name": "From Git",
                "trigger_id": "node-1",
                "trigger": {"kind": "webhook"},
                "steps": [{"kind": "api_call", "id": "node-2", "name": "Call", "method": "POST", "url": url}],
            },
        },
    }


def _clear_bindings() -> None:
    with get_sessionmaker()() as session:
        session.execute(delete(NamespaceBinding))
        session.commit()


@pytest.fixture
def sync(client) -> Iterator[ClusterSync]:
    _clear_bindings()
    yield ClusterSync(FakeDeployer(), get_sessionmaker())  # type: ignore[arg-type]
    _clear_bindings()


def bind(email: str, namespace: str = "konnectz") -> None:
    """What an administrator does first: ``python -m konnectz_api namespace bind konnectz EMAIL``."""
    with get_sessionmaker()() as session:
        namespace_bindings.bind(session, namespace, email)


def _flows_of(email: str) -> list[Konnect]:
    with get_sessionmaker()() as session:
        owner = session.scalar(select(User.id).where(func.lower(User.email) == email.lower()))
        return list(session.scalars(select(Konnect).where(Konnect.owner_id == owner)))


def _konnect(konnect_id: int) -> Konnect:
    with get_sessionmaker()() as session:
        konnect = session.get(Konnect, konnect_id)
        assert konnect is not None
        session.expunge(konnect)
        return konnect


def test_a_konnect_applied_with_kubectl_is_imported_for_its_owner_and_followed(api, sync):
    email = api.signup_and_verify()
    bind(email)
    items = sync.deployer._api.items
    items["git"] = applied("git", email.upper())  # e-mail case does not matter
    sync.reconcile(copy.deepcopy(items["git"]))

    spec = items["git"]["spec"]
    konnect = _konnect(spec["konnectId"])
    assert konnect.status == "Published" and konnect.konnect_name == "From Git"
    assert spec["ownerId"] == konnect.owner_id
    assert items["git"]["metadata"]["labels"] == {
        "konnectz.io/owner": str(konnect.owner_id),
        "konnectz.io/konnect-id": str(konnect.id),
    }
    # The deployer finds the flow's Konnect under the name it was applied with (runs, withdraw).
    assert sync.deployer.names[konnect.id] == "git"
    assert spec["trigger"] == {"kind": "webhook", "tokenSecret": "git-trigger"}
    assert sync.deployer.tokens["git"] == konnect.webhook_token  # the token goes to the Secret only
    assert konnect.published_spec is not None and konnect.published_spec["trigger"]["token"] == konnect.webhook_token
    nodes = {n["id"]: n for n in konnect.canvas_json["apps"]}
    assert nodes["node-2"]["data"]["selectedValue"]["apiDetails"]["endpointURL"] == "https://crm.example.com/contacts"

    sync.reconcile(copy.deepcopy(items["git"]))  # seen again (the api's own write): nothing new
    assert _konnect(konnect.id).published_at == konnect.published_at

    # An edit in the cluster updates the flow, canvas included.
    items["git"]["spec"]["flow"]["steps"][0]["url"] = "https://crm.example.com/v2"
    sync.reconcile(copy.deepcopy(items["git"]))
    edited = _konnect(konnect.id)
    assert (
        edited.published_spec is not None and edited.published_spec["steps"][0]["url"] == "https://crm.example.com/v2"
    )
    nodes = {n["id"]: n for n in edited.canvas_json["apps"]}
    assert nodes["node-2"]["data"]["selectedValue"]["apiDetails"]["endpointURL"] == "https://crm.example.com/v2"

    # Deleted in the cluster: withdrawn.
    gone = items.pop("git")
    sync.withdraw(gone)
    assert konnect.id not in sync.deployer.names
    assert _konnect(konnect.id).status == "Draft" and _konnect(konnect.id).published_spec is None


def test_an_unknown_or_missing_owner_and_a_foreign_id_are_refused_in_the_status(api, sync):
    """Refused in the status: the api says why in an annotation, the operator shows it (shown())."""
    bind(api.signup_and_verify())
    items = sync.deployer._api.items
    items["nobody"] = applied("nobody", None)
    items["stranger"] = applied("stranger", "stranger@example.com")
    items["foreign"] = applied("foreign", api.signup_and_verify())
    items["foreign"]["spec"].update(konnectId=999_999_999, ownerId=1)
    for name in ("nobody", "stranger", "foreign"):
        sync.reconcile(copy.deepcopy(items[name]))
        assert shown(items[name])["phase"] == "Failed", name
    assert "konnectz.io/owner" in shown(items["nobody"])["message"]
    assert shown(items["stranger"])["message"] == (
        "owner 'stranger@example.com' may not publish in the account bound to namespace konnectz: name the "
        "account's owner or a team member whose access level allows publishing (konnectz.io/owner)"
    )
    assert "999999999" in shown(items["foreign"])["message"]
    assert "konnectId" not in items["stranger"]["spec"]


def test_at_start_a_published_flow_without_its_konnect_is_withdrawn(api, sync):
    email = api.signup_and_verify()
    bind(email)
    items = sync.deployer._api.items
    items["kept"] = applied("kept", email)
    items["lost"] = applied("lost", email)
    sync.sync_all()
    kept, lost = items["kept"]["spec"]["konnectId"], items.pop("lost")["spec"]["konnectId"]
    sync.sync_all()  # the api restarts and finds "lost" gone
    assert _konnect(kept).status == "Published"
    assert _konnect(lost).status == "Draft"


class RecordingCustomObjects(FakeCustomObjects):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []

    def list_namespaced_custom_object(self, group, version, namespace, plural, **kw: Any) -> dict[str, Any]:
        self.calls.append(("list", kw.get("label_selector", "")))
        key, _, value = kw.get("label_selector", "=").partition("=")
        items = [i for i in self.items.values() if (i["metadata"].get("labels") or {}).get(key) == value]
        return {"items": copy.deepcopy(items)}

    def patch_namespaced_custom_object_status(self, group, version, namespace, plural, name, body, **_: Any) -> None:
        self.calls.append(("status", name))
        super().patch_namespaced_custom_object_status(group, version, namespace, plural, name, body)

    def patch_namespaced_custom_object(self, group, version, namespace, plural, name, body, **_: Any) -> None:
        self.calls.append(("annotate", name))
        super().patch_namespaced_custom_object(group, version, namespace, plural, name, body)

    def delete_namespaced_custom_object(self, group, version, namespace, plural, name, **_: Any) -> None:
        self.calls.append(("delete", name))
        self.items.pop(name)


async def test_runs_and_withdrawals_reach_a_konnect_applied_under_a_name_of_its_own():
    """An imported Konnect keeps its name (not konnect-<id>): today's runs go to its status and a
    withdrawal deletes it, found by the id label when the cluster sync has not named it yet."""
    from datetime import UTC, datetime

    from konnectz_api.services.deployer import KubernetesDeployer
    from konnectz_contracts.events import TaskEvent

    deployer = KubernetesDeployer.__new__(KubernetesDeployer)
    deployer.namespace, deployer._names = "konnectz", {}
    deployer._api = fake = RecordingCustomObjects()
    fake.items["orders"] = applied("orders", "a@example.com")
    fake.items["orders"]["spec"].update(konnectId=7, ownerId=3)
    fake.items["orders"]["metadata"]["labels"] = {"konnectz.io/konnect-id": "7"}
    now = datetime.now(UTC)
    event = TaskEvent.model_validate(
        {
            "run_id": "r1", "konnect_id": 7, "owner_id": 3, "konnect_name": "Orders", "status": "SUCCESS",
            "started_at": now, "finished_at": now, "trigger_id": "node-1", "trigger_output": {}, "steps": [],
        }
    )  # fmt: skip
    await deployer.record_run(event, runs_today=1, failures_today=0)
    # The api writes the run into an annotation; the operator, the one writer of the status, copies it.
    assert last_run_status(fake.items["orders"]["metadata"]["annotations"]) == {
        "lastRunTime": now.isoformat(),
        "lastRunStatus": "SUCCESS",
        "lastRunId": "r1",
        "runsDay": now.date().isoformat(),
        "runsToday": 1,
        "failuresToday": 0,
    }
    assert "runsToday" not in (fake.items["orders"].get("status") or {})
    assert fake.calls == [("list", "konnectz.io/konnect-id=7"), ("annotate", "orders")]
    await deployer.record_run(event, runs_today=2, failures_today=0)  # remembered: no second lookup
    assert fake.calls[-1] == ("annotate", "orders") and len(fake.calls) == 3
    assert last_run_status(fake.items["orders"]["metadata"]["annotations"])["runsToday"] == 2
    await deployer.unpublish(7)
    assert fake.calls[-1] == ("delete", "orders") and "orders" not in fake.items
    deployer.forget(7, "orders")
    assert deployer.resource_name(7) == "konnect-7"  # a flow the api published itself


def test_an_apply_that_creates_reads_the_konnect_back_for_the_token_secret_owner():
    """The kubernetes client gives no body for a 201: the new Konnect's uid is read back, so the
    token Secret is owned by it (and goes with it)."""
    from konnectz_api.services.deployer import KubernetesDeployer

    class Creating(FakeCustomObjects):
        def patch_namespaced_custom_object(self, group, version, namespace, plural, name, body, **_: Any) -> None:
            self.items[name] = {**copy.deepcopy(body), "metadata": {**body["metadata"], "uid": "uid-" + name}}
            return None  # what the client answers for 201 Created

    deployer = KubernetesDeployer.__new__(KubernetesDeployer)
    deployer.namespace, deployer._names = "konnectz", {}
    deployer._api = Creating()
    stored = deployer.apply(applied("orders", "a@example.com"))
    assert stored["metadata"]["uid"] == "uid-orders"


# --- who may publish as whom: namespace bindings (docs/security.md) -------------------------------------

UNBOUND = (
    "namespace konnectz is not bound to a Konnectz account: an administrator binds it with "
    "`python -m konnectz_api namespace bind konnectz <owner-email>` (or the admin API, or the chart value "
    "namespaceBindings)"
)


def _user(email: str) -> User:
    with get_sessionmaker()() as session:
        user = session.scalar(select(User).where(func.lower(User.email) == email.lower()))
        assert user is not None
        session.expunge(user)
        return user


def _member(owner_email: str, kind: str = "team", access: str | None = "Create") -> str:
    from konnectz_api.crud import members

    with get_sessionmaker()() as session:
        owner = session.scalar(select(User).where(User.email == owner_email))
        member = members.add_member(
            session,
            owner=owner,
            kind=kind,  # type: ignore[arg-type]
            email=f"{kind}-{owner_email}",
            first_name="Mem",
            last_name="Ber",
            access=access,
            task=None if kind == "team" else 0,
        )
        return member.email


def _audit(account_id: int) -> list[tuple[str, str, str]]:
    with get_sessionmaker()() as session:
        rows = session.scalars(select(AuditEntry).where(AuditEntry.account_id == account_id).order_by(AuditEntry.id))
        return [(r.actor_email, r.action, r.outcome) for r in rows]


def test_a_konnect_in_an_unbound_namespace_is_refused_until_an_administrator_binds_it(api, sync):
    """The impersonation of issue 33: whoever can create a Konnect in the namespace names any user.
    Unbound, nothing is created (no flow, no token, no write-back); bound, it is examined again."""
    victim = api.signup_and_verify()
    items = sync.deployer._api.items
    items["evil"] = applied("evil", victim)
    sync.reconcile(copy.deepcopy(items["evil"]))
    assert shown(items["evil"]) == {"phase": "Failed", "message": UNBOUND}
    assert "konnectId" not in items["evil"]["spec"] and "labels" not in items["evil"]["metadata"]
    assert sync.deployer.tokens == {} and _flows_of(victim) == []

    # The same refusal, whoever is named (no user is revealed to the namespace).
    items["nobody"] = applied("nobody", "nobody@example.com")
    sync.reconcile(copy.deepcopy(items["nobody"]))
    assert shown(items["nobody"])["message"] == UNBOUND

    # The owner's administrator binds the namespace: the waiting Konnects are examined again.
    bind(victim)
    sync.retry_waiting()
    konnect = _konnect(items["evil"]["spec"]["konnectId"])
    assert konnect.owner_id == _user(victim).id and konnect.status == "Published"
    assert shown(items["evil"]) == {}  # imported: the refusal went (the operator's reconcile says Ready)
    assert "konnectId" not in items["nobody"]["spec"]
    assert "may not publish" in shown(items["nobody"])["message"]


def test_a_bound_namespace_imports_only_for_the_owner_of_its_account(api, sync):
    owner, other = api.signup_and_verify(), api.signup_and_verify()
    bind(owner)
    items = sync.deployer._api.items
    items["theirs"] = applied("theirs", other)
    sync.reconcile(copy.deepcopy(items["theirs"]))
    assert shown(items["theirs"])["message"] == (
        f"owner {other!r} may not publish in the account bound to namespace konnectz: name the account's owner "
        "or a team member whose access level allows publishing (konnectz.io/owner)"
    )
    assert "konnectId" not in items["theirs"]["spec"] and sync.deployer.tokens == {} and _flows_of(other) == []

    items["mine"] = applied("mine", owner)
    sync.reconcile(copy.deepcopy(items["mine"]))
    assert _konnect(items["mine"]["spec"]["konnectId"]).owner_id == _user(owner).id


def test_a_team_member_who_may_publish_imports_into_the_account_and_the_audit_log_says_so(api, sync):
    """A member's import is owned by the account, as the member's publish in the UI is; a member with no
    access level that publishes, an agency sub-account (an account of its own) and another account's
    member are refused."""
    owner, elsewhere = api.signup_and_verify(), api.signup_and_verify()
    member, stranger = _member(owner), _member(elsewhere)
    bind(owner)
    items = sync.deployer._api.items
    items["by-member"] = applied("by-member", member)
    sync.reconcile(copy.deepcopy(items["by-member"]))
    konnect = _konnect(items["by-member"]["spec"]["konnectId"])
    account = _user(owner)
    assert konnect.owner_id == account.id and items["by-member"]["spec"]["ownerId"] == account.id
    assert _audit(account.id) == [
        (member, f"import Konnect konnectz/by-member (kubectl) as flow {konnect.id}", "allowed")
    ]

    items["by-stranger"] = applied("by-stranger", stranger)
    sync.reconcile(copy.deepcopy(items["by-stranger"]))
    assert "may not publish" in shown(items["by-stranger"])["message"]

    agency = _member(owner, kind="agency", access=None)
    items["by-agency"] = applied("by-agency", agency)
    sync.reconcile(copy.deepcopy(items["by-agency"]))
    assert "may not publish" in shown(items["by-agency"])["message"]

    with get_sessionmaker()() as session:  # an access level that does not publish
        session.execute(User.__table__.update().where(User.email == member).values(access="Read"))
        session.commit()
    items["read-only"] = applied("read-only", member)
    sync.reconcile(copy.deepcopy(items["read-only"]))
    assert "may not publish" in shown(items["read-only"])["message"]
    assert _audit(account.id)[-1] == (member, "import Konnect konnectz/read-only (kubectl)", "denied")
    sync.reconcile(copy.deepcopy(items["read-only"]))  # seen again: refused once in the audit log
    assert len(_audit(account.id)) == 2
    assert [k.id for k in _flows_of(owner)] == [konnect.id]


def test_after_unbind_a_new_konnect_is_refused_and_imported_flows_keep_running(api, sync):
    owner = api.signup_and_verify()
    bind(owner)
    items = sync.deployer._api.items
    items["kept"] = applied("kept", owner)
    sync.reconcile(copy.deepcopy(items["kept"]))
    kept = items["kept"]["spec"]["konnectId"]
    with get_sessionmaker()() as session:
        assert namespace_bindings.unbind(session, "konnectz")
    items["late"] = applied("late", owner)
    sync.reconcile(copy.deepcopy(items["late"]))
    assert shown(items["late"])["message"] == UNBOUND and "konnectId" not in items["late"]["spec"]
    # The imported flow is not withdrawn: it stays published (its Konnect, its token, its runner).
    sync.sync_all()
    assert _konnect(kept).status == "Published" and sync.deployer.tokens["kept"] == _konnect(kept).webhook_token
    assert "status" not in items["kept"]


def test_the_environments_bindings_wait_for_their_owner_win_and_go_when_no_longer_named(api, sync):
    """KONNECTZ_NAMESPACE_BINDINGS (the chart's namespaceBindings): applied at start, waiting for an owner
    who has not signed up yet, not changed by hand, removed once the variable no longer names them."""
    email = f"later-{api.signup_and_verify()}"
    configured = ClusterSync(sync.deployer, get_sessionmaker(), configured_bindings={"konnectz": email})
    configured.apply_bindings()
    with get_sessionmaker()() as session:
        assert namespace_bindings.binding_of(session, "konnectz") is None
        (row,) = namespace_bindings.listed(session, {"konnectz": email})
        assert row.pending == f"No user with e-mail {email}"
    api.signup_and_verify(email)
    configured.apply_bindings()  # the next cycle
    with get_sessionmaker()() as session:
        row = namespace_bindings.binding_of(session, "konnectz")
        assert row is not None and row.owner_id == _user(email).id and row.source == "environment"
        with pytest.raises(namespace_bindings.BindingError, match="KONNECTZ_NAMESPACE_BINDINGS"):
            namespace_bindings.unbind(session, "konnectz")
        with pytest.raises(namespace_bindings.BindingError, match="KONNECTZ_NAMESPACE_BINDINGS"):
            namespace_bindings.bind(session, "konnectz", email)
    ClusterSync(sync.deployer, get_sessionmaker(), configured_bindings={}).apply_bindings()  # restarted without
    with get_sessionmaker()() as session:
        assert namespace_bindings.binding_of(session, "konnectz") is None


def _claim_of(item: dict[str, Any], konnect: Konnect, name: str, url: str = "https://evil.example.com/x") -> dict:
    """A second Konnect naming ``konnect``'s ids (they are readable by anyone who may list Konnects)."""
    other = applied(name, None, url)
    other["spec"].update(konnectId=konnect.id, ownerId=konnect.owner_id)
    other["metadata"]["labels"] = dict(item["metadata"].get("labels") or {})
    return other


def test_a_second_konnect_claiming_a_flows_ids_is_refused_and_changes_nothing(api, sync):
    email = api.signup_and_verify()
    bind(email)  # kubectl-applied Konnects are imported from a bound namespace
    items = sync.deployer._api.items
    items["git"] = applied("git", email)
    sync.reconcile(copy.deepcopy(items["git"]))
    konnect = _konnect(items["git"]["spec"]["konnectId"])
    assert konnect.resource_uid == "uid-git"  # the resource it was imported from

    items["evil"] = _claim_of(items["git"], konnect, "evil")
    assert sync.reconcile(copy.deepcopy(items["evil"])) is False
    assert shown(items["evil"])["phase"] == "Failed"
    assert f"konnectId {konnect.id} is claimed by another resource" in shown(items["evil"])["message"]
    after = _konnect(konnect.id)
    assert (after.published_spec, after.canvas_json, after.konnect_name, after.status, after.resource_uid) == (
        konnect.published_spec, konnect.canvas_json, konnect.konnect_name, "Published", "uid-git",
    )  # fmt: skip
    assert sync.deployer.names[konnect.id] == "git"  # publishes and runs still go to the original
    assert sync.deployer.bound == {"git": (konnect.id, "uid-git")}  # the operator runs the original only

    # The original is still followed.
    items["git"]["spec"]["flow"]["steps"][0]["url"] = "https://crm.example.com/v2"
    sync.reconcile(copy.deepcopy(items["git"]))
    assert _konnect(konnect.id).published_spec["steps"][0]["url"] == "https://crm.example.com/v2"  # type: ignore[index]

    # At start (the copy listed too) and when the copy is deleted: the flow stays as it is.
    sync.sync_all()
    assert _konnect(konnect.id).status == "Published" and _konnect(konnect.id).resource_uid == "uid-git"
    sync.withdraw(items.pop("evil"))
    assert _konnect(konnect.id).status == "Published" and sync.deployer.names[konnect.id] == "git"

    # The flow's own resource deleted: withdrawn. A GitOps re-apply still carrying its ids is a new
    # resource (another UID): refused, the flow stays a draft (publish it from the editor, or leave out
    # the ids to import the YAML as a new flow).
    sync.withdraw(items.pop("git"))
    assert _konnect(konnect.id).status == "Draft"
    again = _claim_of(applied("git", email), konnect, "git", url="https://crm.example.com/v3")
    again["metadata"]["uid"] = "uid-git-again"
    items["git"] = again
    assert sync.reconcile(copy.deepcopy(again)) is False
    assert "is claimed by another resource" in shown(items["git"])["message"]
    withdrawn = _konnect(konnect.id)
    assert withdrawn.status == "Draft" and withdrawn.published_spec is None and withdrawn.resource_uid == "uid-git"

    # The api's own publish records the resource it creates under the flow's claim lock: followed.
    with sync.claim(konnect.id) as claim:
        claim.uid = "uid-git-again"
    assert sync.reconcile(copy.deepcopy(again)) is True
    assert _konnect(konnect.id).status == "Published"


def test_a_flow_from_before_uids_were_recorded_adopts_its_oldest_konnect(api, sync):
    from sqlalchemy import update

    email = api.signup_and_verify()
    bind(email)  # kubectl-applied Konnects are imported from a bound namespace
    items = sync.deployer._api.items
    items["old"] = applied("old", email)
    sync.reconcile(copy.deepcopy(items["old"]))
    konnect = _konnect(items["old"]["spec"]["konnectId"])
    with get_sessionmaker()() as session:
        session.execute(update(Konnect).where(Konnect.id == konnect.id).values(resource_uid=None))
        session.commit()
    items["old"]["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    items["a-copy"] = _claim_of(items["old"], konnect, "a-copy")  # listed first, created later
    items["a-copy"]["metadata"]["creationTimestamp"] = "2026-06-01T00:00:00Z"
    sync.sync_all()
    assert _konnect(konnect.id).resource_uid == "uid-old"
    assert shown(items["a-copy"])["phase"] == "Failed"
    assert _konnect(konnect.id).published_spec == konnect.published_spec


def test_a_publish_creates_and_records_its_konnect_and_never_takes_over_someone_elses(api, sync):
    """The deployer applies under the flow's claim: a resource it creates is recorded as the flow's;
    one that exists under the name it would use, and is not the recorded one, is not published to."""
    from konnectz_api.services.deployer import DeployError, KubernetesDeployer
    from konnectz_contracts.spec import FlowSpec

    class Applying(FakeCustomObjects):
        def patch_namespaced_custom_object(self, group, version, namespace, plural, name, body, **kw: Any) -> Any:
            if kw.get("_content_type") == "application/merge-patch+json":  # the binding annotation
                assert body["metadata"]["uid"] == self.items[name]["metadata"]["uid"]
                self.items[name]["metadata"].setdefault("annotations", {}).update(body["metadata"]["annotations"])
                return copy.deepcopy(self.items[name])
            if name in self.items:  # 200: an update answers the stored object
                self.items[name]["spec"] = copy.deepcopy(body["spec"])
                return copy.deepcopy(self.items[name])
            self.items[name] = {**copy.deepcopy(body), "metadata": {**body["metadata"], "uid": f"uid-{name}-new"}}
            return None  # 201 Created

    email = api.signup_and_verify()
    bind(email)  # kubectl-applied Konnects are imported from a bound namespace
    items = sync.deployer._api.items
    items["git"] = applied("git", email)
    sync.reconcile(copy.deepcopy(items["git"]))
    konnect = _konnect(items["git"]["spec"]["konnectId"])
    spec = FlowSpec.model_validate(konnect.published_spec)
    sync.withdraw(items.pop("git"))  # the flow's resource is deleted: a draft, its UID still recorded

    deployer = KubernetesDeployer.__new__(KubernetesDeployer)
    deployer.namespace, deployer._names, deployer.runner_mode = "konnectz", {}, "dedicated"
    deployer._api = fake = Applying()
    deployer.apply_token = lambda name, token, uid: None  # type: ignore[method-assign]
    deployer.binder, deployer.binding_key = sync, "k" * 40
    # Someone created konnect-<id> naming the flow: the publish refuses to write into it.
    fake.items[f"konnect-{konnect.id}"] = _claim_of(applied("x", None), konnect, f"konnect-{konnect.id}")
    with pytest.raises(DeployError, match="not this flow's resource"):
        deployer._publish(spec, email)
    assert _konnect(konnect.id).resource_uid == "uid-git"

    # Gone: the publish creates konnect-<id> and records it; the cluster sync follows it.
    fake.items.clear()
    deployer._names.clear()
    deployer._publish(spec, email)
    assert _konnect(konnect.id).resource_uid == f"uid-konnect-{konnect.id}-new"
    # ... and binds it: the operator runs only a Konnect whose binding names its flow and its uid.
    from konnectz_contracts.broker_token import resource_binding

    annotations = fake.items[f"konnect-{konnect.id}"]["metadata"]["annotations"]
    assert annotations["konnectz.io/binding"] == resource_binding("k" * 40, konnect.id, f"uid-konnect-{konnect.id}-new")
    items[f"konnect-{konnect.id}"] = fake.items[f"konnect-{konnect.id}"]
    assert sync.reconcile(copy.deepcopy(fake.items[f"konnect-{konnect.id}"])) is True
    deployer._publish(spec, email)  # publishing again updates the recorded resource
