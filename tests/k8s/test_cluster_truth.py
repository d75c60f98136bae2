"""The Konnect is the source of truth, both ways, on the real API server of tests/cluster.

The api (Kubernetes deployer), PostgreSQL, NATS and a runner run as local processes (the runner,
started with KONNECTZ_POOL, plays the shared pool); the operator runs in-process. A Konnect
applied with kubectl in a namespace an administrator bound to an account is imported into the api
for the account's owner its owner annotation names, and runs; in an unbound namespace, or naming
anyone else, it is refused in its status and nothing is created; an edit in the cluster shows in
the editor; a stale editor publish is refused with a conflict instead of overwriting it; kubectl
delete withdraws the flow; no token is in spec or annotations.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from kopf.testing import KopfRunner
from kubernetes import client
from kubernetes.client import ApiException

from konnectz_contracts.broker_token import konnect_token
from konnectz_contracts.resource import GROUP, PLURAL, VERSION, token_secret
from konnectz_devstack import Platform, testing
from konnectz_devstack.pytest_plugin import make_platform
from konnectz_devstack.testing import publish_canvas, sign_up, test_trigger, webhook_canvas

pytestmark = pytest.mark.k8s

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "crds" / "konnects.konnectz.io.yaml"
LAST_HANDLED = "kopf.zalando.org/last-handled-configuration"
# The export of docs/kubernetes.md ("A GitOps round trip"): the spec without this installation's ids.
EXPORT_JQ = """{apiVersion, kind,
  metadata: {name: "orders", annotations: {"konnectz.io/owner": .metadata.annotations["konnectz.io/owner"]}},
  spec: (.spec | del(.konnectId, .ownerId, .trigger.tokenSecret))}"""


def konnectz_cli(platform: Platform, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``python -m konnectz_api ARGS`` beside the platform's api (its database): what an administrator runs."""
    return subprocess.run(
        [sys.executable, "-m", "konnectz_api", *args],
        env=platform.component_env(), capture_output=True, text=True, check=check, timeout=60,
    )  # fmt: skip


def wait_until(what: str, fn: Any, timeout: float = 60.0, interval: float = 0.2) -> Any:
    """Until ``fn`` answers something truthy; an ApiException (not made yet) counts as not yet."""
    return testing.wait_until(fn, timeout, interval, what, retry_on=(ApiException,))


@pytest.fixture(scope="module")
def konnect_crd(kube) -> None:
    kube.run(kube.kubectl, "apply", "--server-side", "--force-conflicts", "-f", str(CRD))
    kube.run(kube.kubectl, "wait", "--for=condition=Established", "--timeout=60s", "crd/konnects.konnectz.io")


def gitops_yaml(namespace: str, receiver_url: str, owner: str) -> str:
    """A flow as someone writes it for Git: no ids, no token, the owner by e-mail."""
    return yaml.safe_dump(
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Konnect",
            "metadata": {
                "name": "orders-from-git",
                "namespace": namespace,
                "annotations": {"konnectz.io/owner": owner},
            },
            "spec": {
                "displayName": "Orders from Git",
                "runnerMode": "shared",
                "trigger": {"kind": "webhook"},
                "flow": {
                    "name": "Orders from Git",
                    "trigger_id": "node-1",
                    "trigger": {"kind": "webhook"},
                    "steps": [
                        {
                            "kind": "api_call",
                            "id": "node-2",
                            "name": "Notify",
                            "method": "POST",
                            "url": f"{receiver_url}/orders",
                            "body": [{"key": "customer", "value": "{{node-1.name}}"}],
                        }
                    ],
                },
            },
        }
    )


def test_a_konnect_applied_with_kubectl_is_imported_runs_and_is_withdrawn_on_delete(
    kube, namespace, konnect_crd, receiver, monkeypatch, tmp_path, operator_nats_env
):
    state = Path(tempfile.mkdtemp(prefix="konnectz-k8s-truth-"))
    state.chmod(0o755)
    platform = make_platform(
        state,
        KONNECTZ_DEPLOYER="kubernetes",
        KONNECTZ_KUBE_NAMESPACE=namespace,
        KUBECONFIG=str(kube.kubeconfig),
        KONNECTZ_POOL="true",
    )
    platform.start()
    monkeypatch.setenv("KUBECONFIG", str(kube.kubeconfig))
    operator_nats_env(platform.nats)
    monkeypatch.setenv("KONNECTZ_RUNNER_POOL_SERVICE", "konnectz-runner-pool")
    monkeypatch.setenv("KONNECTZ_RUNNER_POOL_SWEEP_SECONDS", "1")
    custom = client.CustomObjectsApi(kube.api)
    args = ["run", "--standalone", "-n", namespace, "-m", "konnectz_operator.handlers"]
    try:
        with KopfRunner(args, timeout=180) as operator:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up(api, "gitops@example.com", "correct horse battery")
            # An administrator binds the namespace to the account first (docs/kubernetes.md, "A GitOps round trip").
            konnectz_cli(platform, "namespace", "bind", namespace, "gitops@example.com")

            # A Konnect naming nobody is refused in its status, with the reason.
            stranger = tmp_path / "stranger.yaml"
            stranger.write_text(
                gitops_yaml(namespace, receiver.url, "nobody@example.com").replace("orders-from-git", "stranger")
            )
            kube.run(kube.kubectl, "apply", "-f", str(stranger))

            def refused() -> str | None:
                got = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "stranger")
                status = got.get("status")
                return (status or {}).get("message") if (status or {}).get("phase") == "Failed" else None

            assert "owner 'nobody@example.com' may not publish" in wait_until("the stranger to be refused", refused)

            manifest = tmp_path / "flow.yaml"
            manifest.write_text(gitops_yaml(namespace, receiver.url, "gitops@example.com"))
            applied = kube.run(kube.kubectl, "apply", "-f", str(manifest))
            assert "created" in applied.stdout

            # PHASE is Pending from the moment the resource exists; OWNER is the e-mail.
            table = kube.run(kube.kubectl, "get", "konnects", "-n", namespace, "--no-headers").stdout
            row = next(line.split() for line in table.splitlines() if line.startswith("orders-from-git"))
            assert "gitops@example.com" in row

            def listed() -> list[dict[str, Any]] | None:
                items = api.get("/api/v1/konnects", headers=headers).json()["konnects"]
                return [k for k in items if k["phase"] == "Ready"] or None

            (flow,) = wait_until("the imported flow in the flow list, Ready", listed, timeout=90)
            assert flow["konnect_name"] == "Orders from Git" and flow["status"] == "Published"
            token = flow["webhook_url"].rsplit("/", 1)[1]

            konnect = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "orders-from-git")
            assert konnect["spec"]["konnectId"] == flow["id"]
            assert konnect["spec"]["trigger"]["tokenSecret"] == "orders-from-git-trigger"
            # No token anywhere in the resource: spec, status, Kopf's last-handled annotation.
            assert LAST_HANDLED in konnect["metadata"]["annotations"]
            assert token not in json.dumps(konnect)
            secret = client.CoreV1Api(kube.api).read_namespaced_secret("orders-from-git-trigger", namespace)
            assert secret.metadata.owner_references[0].uid == konnect["metadata"]["uid"]

            # The editor opens it: a canvas with the webhook and the API call from the YAML.
            edit = api.get(f"/api/v1/konnects/{flow['id']}/edit", headers=headers).json()
            nodes = {n["id"]: n for n in edit["canvas_json"]["apps"]}
            assert nodes["node-1"]["type"] == "WebhookInner"
            assert nodes["node-2"]["data"]["selectedValue"]["apiDetails"]["endpointURL"] == f"{receiver.url}/orders"

            # It runs: the pool runner serves its webhook (the operator handed it the token).
            hook = f"{platform.runner_url}/hooks/{token}"

            def post() -> httpx.Response | None:
                resp = httpx.post(hook, json={"name": "From Git"}, timeout=5)
                return resp if resp.status_code == 200 else None

            wait_until("the pool runner to serve the imported webhook", post)
            wait_until("the API call", lambda: receiver.requests)
            assert receiver.requests[0]["body"]["customer"] == "From Git"

            def counted() -> dict[str, Any] | None:
                status = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "orders-from-git")[
                    "status"
                ]
                return status if status.get("runsToday") == 1 else None

            status = wait_until("runs today in the status", counted)
            assert status["failuresToday"] == 0 and status["lastRunStatus"] == "SUCCESS"

            # kubectl delete withdraws the flow in the api.
            kube.run(kube.kubectl, "delete", "konnect", "orders-from-git", "-n", namespace)

            def withdrawn() -> bool:
                items = api.get("/api/v1/konnects", headers=headers).json()["konnects"]
                return [k["status"] for k in items if k["id"] == flow["id"]] == ["Draft"]

            wait_until("the flow to be withdrawn", withdrawn)
            wait_until("the pool to drop the webhook", lambda: httpx.post(hook, json={}).status_code == 404)
            custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "stranger")
        assert operator.exception is None, operator.output
    finally:
        platform.stop()
        refused = platform.nats.violations()
        shutil.rmtree(state, ignore_errors=True)
    assert not refused, refused[:10]  # the operator, the api and the runners kept to their NATS grants


def test_editor_and_kubectl_edits_meet_and_a_stale_editor_gets_a_conflict(
    kube, namespace, konnect_crd, monkeypatch, tmp_path
):
    state = Path(tempfile.mkdtemp(prefix="konnectz-k8s-edit-"))
    state.chmod(0o755)
    platform = make_platform(
        state,
        KONNECTZ_DEPLOYER="kubernetes",
        KONNECTZ_KUBE_NAMESPACE=namespace,
        KUBECONFIG=str(kube.kubeconfig),
        KONNECTZ_POOL="true",
    )
    platform.start()
    custom = client.CustomObjectsApi(kube.api)
    try:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        headers = sign_up(api, "editor@example.com", "correct horse battery")
        canvas = webhook_canvas("https://crm.example.com/v1/contacts", name="Contacts")
        published = publish_canvas(api, headers, canvas)
        konnect_id = published["konnect_id"]
        name = f"konnect-{konnect_id}"
        token = published["webhook_url"].rsplit("/", 1)[1]

        def url_in_cluster() -> str:
            k = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
            return str(k["spec"]["flow"]["steps"][0]["url"])

        konnect = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
        assert konnect["metadata"]["annotations"]["konnectz.io/owner"] == "editor@example.com"
        assert token not in json.dumps(konnect)
        assert (konnect.get("status") or {}).get("phase") == "Pending"  # no operator here: Pending all the same

        # Editor → resource: a changed URL is published to the Konnect.
        canvas["apps"][1]["data"]["selectedValue"]["apiDetails"]["endpointURL"] = "https://crm.example.com/v2/contacts"
        test_trigger(api, headers, canvas, konnect_id)
        body = {"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas}
        r = api.post("/api/v1/konnects/publish_konnect", headers=headers, json=body)
        assert r.status_code == 200, r.text
        assert url_in_cluster() == "https://crm.example.com/v2/contacts"

        # kubectl → editor: an edit in the cluster shows in the editor.
        patch = [{"op": "replace", "path": "/spec/flow/steps/0/url", "value": "https://crm.example.com/v3/contacts"}]
        kube.run(kube.kubectl, "patch", "konnect", name, "-n", namespace, "--type=json", "-p", json.dumps(patch))

        def edited_in_editor() -> bool:
            edit = api.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()
            nodes = {n["id"]: n for n in edit["canvas_json"]["apps"]}
            return nodes["node-2"]["data"]["selectedValue"]["apiDetails"]["endpointURL"].endswith("/v3/contacts")

        wait_until("the kubectl edit to show in the editor", edited_in_editor)

        # A stale editor (still showing v2) publishing a change of that step: a conflict, not an overwrite.
        canvas["apps"][1]["data"]["selectedValue"]["apiDetails"]["endpointURL"] = "https://crm.example.com/v4/contacts"
        r = api.post("/api/v1/konnects/publish_konnect", headers=headers, json=body)
        assert r.status_code == 409, r.text
        message = r.json()["message"]
        assert "changed in the cluster" in message and "kubectl-patch" in message
        assert url_in_cluster() == "https://crm.example.com/v3/contacts"

        # The editor's version is kept as the draft; agreeing with the cluster's step (and renamed), it publishes.
        draft = api.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()["canvas_json"]
        assert draft["apps"][1]["data"]["selectedValue"]["apiDetails"]["endpointURL"].endswith("/v4/contacts")
        canvas["apps"][1]["data"]["selectedValue"]["apiDetails"]["endpointURL"] = "https://crm.example.com/v3/contacts"
        canvas["flowName"] = "Contacts (v3)"
        r = api.post("/api/v1/konnects/publish_konnect", headers=headers, json=body)
        assert r.status_code == 200, r.text
        konnect = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
        assert konnect["spec"]["displayName"] == "Contacts (v3)"
        assert konnect["spec"]["flow"]["steps"][0]["url"] == "https://crm.example.com/v3/contacts"

        # docs/kubernetes.md's GitOps export (the same jq), applied under a new name: imported as a
        # flow of its own, with its own token (tokens never travel in YAML).
        exported = subprocess.run(
            [str(kube.kubectl), "-n", namespace, "get", "konnect", name, "-o", "json"],
            env=kube.env, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        orders = subprocess.run(["jq", EXPORT_JQ], input=exported, capture_output=True, text=True, check=True).stdout
        assert "konnectId" not in orders and token not in orders
        (tmp_path / "orders.json").write_text(orders)
        konnectz_cli(platform, "namespace", "bind", namespace, "editor@example.com")
        kube.run(kube.kubectl, "-n", namespace, "apply", "-f", str(tmp_path / "orders.json"))

        def imported() -> dict[str, Any] | None:
            items = api.get("/api/v1/konnects", headers=headers).json()["konnects"]
            return next((k for k in items if k["id"] != konnect_id and k["status"] == "Published"), None)

        copy = wait_until("the exported flow to be imported", imported)
        assert copy["konnect_name"] == "Contacts (v3)"
        assert copy["webhook_url"].rsplit("/", 1)[1] != token
        applied = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "orders")
        assert applied["spec"]["konnectId"] == copy["id"]
        assert applied["spec"]["trigger"]["tokenSecret"] == "orders-trigger"
        assert applied["spec"]["flow"] == konnect["spec"]["flow"]
    finally:
        platform.stop()
        refused = platform.nats.violations()
        shutil.rmtree(state, ignore_errors=True)
    assert not refused, refused[:10]  # the operator, the api and the runners kept to their NATS grants


# --- Who may publish as whom (docs/security.md): a namespace is bound to an account by an administrator ---------


def test_only_a_bound_namespace_imports_and_only_for_its_account(
    kube, namespace, konnect_crd, receiver, monkeypatch, tmp_path, operator_nats_env
):
    """The impersonation of issue 33: whoever can create a Konnect in the api's namespace named any user as
    its owner and published a flow as them (with their connected app accounts). Now an unbound namespace
    imports nothing, a bound one only for its account; unbinding stops new imports, not the flows running."""
    state = Path(tempfile.mkdtemp(prefix="konnectz-k8s-bind-"))
    state.chmod(0o755)
    platform = make_platform(
        state,
        KONNECTZ_DEPLOYER="kubernetes",
        KONNECTZ_KUBE_NAMESPACE=namespace,
        KUBECONFIG=str(kube.kubeconfig),
        KONNECTZ_POOL="true",
        KONNECTZ_ADMIN_EMAILS="admin@example.com",
        KONNECTZ_KUBE_WATCH_SECONDS="2",  # a refused Konnect is examined again every 2 s (30 s by default)
    )
    platform.start()
    monkeypatch.setenv("KUBECONFIG", str(kube.kubeconfig))
    operator_nats_env(platform.nats)
    monkeypatch.setenv("KONNECTZ_RUNNER_POOL_SERVICE", "konnectz-runner-pool")
    monkeypatch.setenv("KONNECTZ_RUNNER_POOL_SWEEP_SECONDS", "1")
    custom = client.CustomObjectsApi(kube.api)
    core = client.CoreV1Api(kube.api)
    unbound = (
        f"namespace {namespace} is not bound to a Konnectz account: an administrator binds it with "
        f"`python -m konnectz_api namespace bind {namespace} <owner-email>` (or the admin API, or the chart value "
        "namespaceBindings)"
    )

    def apply(name: str, owner: str) -> None:
        path = tmp_path / f"{name}.yaml"
        path.write_text(gitops_yaml(namespace, receiver.url, owner).replace("orders-from-git", name))
        kube.run(kube.kubectl, "apply", "-f", str(path))

    def failed(name: str) -> str | None:
        status = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name).get("status") or {}
        return status.get("message") if status.get("phase") == "Failed" else None

    def nothing_created(name: str, *users: dict[str, str]) -> None:
        konnect = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
        assert "konnectId" not in konnect["spec"] and "ownerId" not in konnect["spec"], konnect["spec"]
        assert "tokenSecret" not in konnect["spec"]["trigger"]
        with pytest.raises(ApiException) as missing:
            core.read_namespaced_secret(f"{name}-trigger", namespace)
        assert missing.value.status == 404
        for headers in users:
            assert api.get("/api/v1/konnects", headers=headers).json()["konnects"] == []

    args = ["run", "--standalone", "-n", namespace, "-m", "konnectz_operator.handlers"]
    try:
        with KopfRunner(args, timeout=240) as operator:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            alice = sign_up(api, "alice@example.com", "correct horse battery")
            mallory = sign_up(api, "mallory@example.com", "correct horse battery")
            admin = sign_up(api, "admin@example.com", "correct horse battery")

            # Unbound: a Konnect naming alice is refused with the reason; no flow, no token, no Secret.
            apply("impersonation", "alice@example.com")
            assert wait_until("the unbound namespace's refusal", lambda: failed("impersonation")) == unbound
            nothing_created("impersonation", alice)

            # Only an administrator binds: alice (a user, not one) gets 403 and the binding is not made.
            bind_url = f"/api/v1/admin/namespace_bindings/{namespace}"
            r = api.put(bind_url, json={"owner_email": "mallory@example.com"}, headers=alice)
            assert r.status_code == 403 and r.json()["message"].startswith("Only an administrator can bind namespaces.")
            assert api.get("/api/v1/admin/namespace_bindings", headers=mallory).status_code == 403
            assert "No namespace is bound" in konnectz_cli(platform, "namespace", "list").stdout

            # The administrator binds the namespace to alice's account: the refused Konnect is examined again.
            r = api.put(bind_url, json={"owner_email": "alice@example.com"}, headers=admin)
            assert r.status_code == 200, r.text
            listed = konnectz_cli(platform, "namespace", "list").stdout
            assert listed == f"{namespace}\talice@example.com\tbound here\tbound\n"

            def alices() -> list[dict[str, Any]] | None:
                items = api.get("/api/v1/konnects", headers=alice).json()["konnects"]
                return [k for k in items if k["phase"] == "Ready"] or None

            (flow,) = wait_until("the Konnect naming alice imported and Ready", alices, timeout=90)
            assert flow["konnect_name"] == "Orders from Git" and flow["status"] == "Published"
            hook = f"{platform.runner_url}/hooks/{flow['webhook_url'].rsplit('/', 1)[1]}"
            wait_until("alice's flow to run", lambda: httpx.post(hook, json={"name": "A"}).status_code == 200)
            wait_until("alice's flow's API call", lambda: receiver.requests)

            # Bound: a Konnect naming a user of another account is refused.
            apply("as-mallory", "mallory@example.com")
            message = wait_until("the other account's refusal", lambda: failed("as-mallory"))
            assert message == (
                f"owner 'mallory@example.com' may not publish in the account bound to namespace {namespace}: name the "
                "account's owner or a team member whose access level allows publishing (konnectz.io/owner)"
            )
            nothing_created("as-mallory", mallory)

            # Unbound again (the CLI): a new Konnect is refused; alice's imported flow stays published and runs.
            assert konnectz_cli(platform, "namespace", "unbind", namespace).stdout.startswith(f"{namespace}: unbound")
            apply("after-unbind", "alice@example.com")
            assert wait_until("the refusal after unbind", lambda: failed("after-unbind")) == unbound
            nothing_created("after-unbind")
            (still,) = api.get("/api/v1/konnects", headers=alice).json()["konnects"]
            assert still["id"] == flow["id"] and still["status"] == "Published"
            assert httpx.post(hook, json={"name": "B"}, timeout=5).status_code == 200
            wait_until("its second API call", lambda: len(receiver.requests) >= 2)

            # The CLI round trip: bind, list, unbind.
            konnectz_cli(platform, "namespace", "bind", namespace, "mallory@example.com")
            assert "mallory@example.com\tbound here" in konnectz_cli(platform, "namespace", "list").stdout
            wait_until("mallory's Konnect imported once bound to her account", lambda: not failed("as-mallory"))
            konnectz_cli(platform, "namespace", "unbind", namespace)
            assert "No namespace is bound" in konnectz_cli(platform, "namespace", "list").stdout
        assert operator.exception is None, operator.output
    finally:
        platform.stop()
        refused = platform.nats.violations()
        shutil.rmtree(state, ignore_errors=True)
    assert not refused, refused[:10]  # the operator, the api and the runners kept to their NATS grants


def test_a_copy_claiming_a_flow_is_refused_and_the_token_minted_for_it_opens_nothing(
    kube, namespace, konnect_crd, monkeypatch
):
    """issue 33: spec.konnectId and spec.ownerId are readable by anyone who may list Konnects. A
    second Konnect naming them is refused in its status and changes nothing in the flow; the broker
    token the operator mints for it (bound to the copy's UID) is refused by the api's broker, while
    the token of the flow's own resource is accepted."""
    key = "credentials-key-" + "0123456789" * 4
    state = Path(tempfile.mkdtemp(prefix="konnectz-k8s-claim-"))
    state.chmod(0o755)
    platform = make_platform(
        state,
        KONNECTZ_DEPLOYER="kubernetes",
        KONNECTZ_KUBE_NAMESPACE=namespace,
        KUBECONFIG=str(kube.kubeconfig),
        KONNECTZ_CREDENTIALS_KEY=key,
    )
    platform.start()
    monkeypatch.setenv("KUBECONFIG", str(kube.kubeconfig))
    monkeypatch.setenv("KONNECTZ_CREDENTIALS_KEY", key)
    monkeypatch.setenv("KONNECTZ_CREDENTIALS_URL", f"{platform.api_url}/api/v1/internal/credentials")
    custom = client.CustomObjectsApi(kube.api)
    core = client.CoreV1Api(kube.api)
    args = ["run", "--standalone", "-n", namespace, "-m", "konnectz_operator.handlers"]
    try:
        with KopfRunner(args, timeout=180) as operator:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up(api, "victim@example.com", "correct horse battery")
            published = publish_canvas(api, headers, webhook_canvas("https://crm.example.com/v1/contacts"))
            konnect_id = published["konnect_id"]
            name = f"konnect-{konnect_id}"
            original = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)

            def runner_token(konnect: str) -> str:
                secret = core.read_namespaced_secret(f"kz-{konnect}", namespace)
                return base64.b64decode(secret.data["credentials-token"]).decode()

            victim_token = wait_until("the flow's runner Secret", lambda: runner_token(name))

            def edited_url() -> str:
                edit = api.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()
                nodes = {n["id"]: n for n in edit["canvas_json"]["apps"]}
                return str(nodes["node-2"]["data"]["selectedValue"]["apiDetails"]["endpointURL"])

            before = api.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()

            # The copy: the same ids, another flow (its own URL), under another name.
            evil = {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "Konnect",
                "metadata": {"name": "evil", "labels": original["metadata"]["labels"]},
                "spec": {
                    **original["spec"],
                    "trigger": {"kind": "webhook", "tokenSecret": "evil-trigger"},
                    "flow": {
                        **original["spec"]["flow"],
                        "steps": [{**original["spec"]["flow"]["steps"][0], "url": "https://evil.example.com/x"}],
                    },
                },
            }
            created = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, evil)
            core.create_namespaced_secret(
                namespace, token_secret("evil", namespace, "whk_" + "e" * 32, owner_uid=created["metadata"]["uid"])
            )

            def refused() -> str | None:
                status = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "evil").get("status")
                return (status or {}).get("message") if (status or {}).get("phase") == "Failed" else None

            message = wait_until("the copy to be refused", refused)
            assert f"konnectId {konnect_id} is claimed by another resource" in message
            after = api.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()
            assert after["canvas_json"] == before["canvas_json"] and edited_url().endswith("/v1/contacts")
            flows = api.get("/api/v1/konnects", headers=headers).json()["konnects"]
            assert [k["status"] for k in flows if k["id"] == konnect_id] == ["Published"]

            # The operator runs only the Konnect the api bound to the flow: the copy gets no runner
            # (it would join the flow's runs on NATS) and no token Secret.
            apps = client.AppsV1Api(kube.api)
            for read in (apps.read_namespaced_deployment, core.read_namespaced_secret):
                with pytest.raises(ApiException) as missing:
                    read("kz-evil", namespace)
                assert missing.value.status == 404
            # A token minted for the copy (what an operator without the binding check renders, bound to
            # the copy's UID) opens nothing at the broker. The flow's own runner token is accepted
            # (404: the flow has no app webhook, which only an authorized caller learns).
            copy_token = konnect_token(key, konnect_id, created["metadata"]["uid"])
            assert copy_token != victim_token

            def broker(path: str, token: str, **body: Any) -> httpx.Response:
                return httpx.post(
                    f"{platform.api_url}/api/v1/internal/{path}",
                    json={"konnect_id": konnect_id, **body},
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=10,
                )

            for path, body in (("credentials", {"account_id": 1}), ("step_secrets", {"sealed": ["x"]})):
                r = broker(path, copy_token, **body)
                assert r.status_code == 401 and "copy of its resource" in r.json()["message"], r.text
            assert broker("webhook_secret", copy_token).status_code == 401
            assert broker("webhook_secret", victim_token).status_code == 404

            # The original is still followed: an edit of it shows in the editor.
            patch = [{"op": "replace", "path": "/spec/flow/steps/0/url", "value": "https://crm.example.com/v2/c"}]
            kube.run(kube.kubectl, "patch", "konnect", name, "-n", namespace, "--type=json", "-p", json.dumps(patch))
            wait_until("the original's edit in the editor", lambda: edited_url().endswith("/v2/c"))

            # Deleting the copy withdraws nothing.
            custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "evil")
            wait_until(
                "the copy to be gone",
                lambda: (
                    "evil"
                    not in [
                        i["metadata"]["name"]
                        for i in custom.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)["items"]
                    ]
                ),
            )
            time.sleep(1.0)
            flows = api.get("/api/v1/konnects", headers=headers).json()["konnects"]
            assert [k["status"] for k in flows if k["id"] == konnect_id] == ["Published"]
        assert operator.exception is None, operator.output
    finally:
        platform.stop()
        refused = platform.nats.violations()
        shutil.rmtree(state, ignore_errors=True)
    assert not refused, refused[:10]  # the operator, the api and the runners kept to their NATS grants
