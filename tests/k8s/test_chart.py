"""The Konnectz Helm chart against the real API server of tests/cluster.

`helm lint`, the values schema, a server-side dry-run of everything the chart can render, and an
install that creates every rendered object (pods are made Ready by kwok; no images are pulled).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "konnectz"

# A trial install: generated dev secrets, no PersistentVolumes (the test cluster has no provisioner).
TRIAL = [
    "--set", "env=test",
    "--set", "nats.persistence.enabled=false",
    "--set", "postgresql.persistence.enabled=false",
]  # fmt: skip
# Every optional part switched on, to dry-run the templates a trial install does not render.
EVERYTHING = [
    *TRIAL,
    "--set", "api.replicas=2",
    "--set", "nats.replicas=3",
    "--set", "operator.clusterWide=true",
    "--set", "ingress.enabled=true",
    "--set", "ingress.host=konnectz.example.com",
    "--set", "ingress.tls.enabled=true",
    "--set", "ingress.tls.secretName=konnectz-tls",
    "--set", "webhooks.ingress.host=hooks.example.com",
]  # fmt: skip


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def test_helm_lint_passes_and_the_values_schema_names_a_wrong_field(kube):
    lint = kube.run(kube.helm, "lint", str(CHART), *TRIAL)
    assert "0 chart(s) failed" in lint.stdout

    wrong = kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL, "--set", "api.replicas=many", check=False)
    assert wrong.returncode != 0
    assert "/api/replicas" in wrong.stderr and "want integer" in wrong.stderr

    typo = kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL, "--set", "nats.replica=3", check=False)
    assert typo.returncode != 0
    assert "replica" in typo.stderr  # an unknown key is refused, not silently ignored


def test_the_chart_crd_is_the_generated_one(kube):
    shown = kube.run(kube.helm, "show", "crds", str(CHART)).stdout
    generated = yaml.safe_load((REPO / "crds" / "konnects.konnectz.io.yaml").read_text())
    crds = {d["metadata"]["name"]: d for d in _docs(shown)}
    assert crds["konnects.konnectz.io"] == generated
    # Kopf's peering resources, which the operator replicas elect their active one through.
    assert {"kopfpeerings.kopf.dev", "clusterkopfpeerings.kopf.dev"} <= set(crds)


def test_every_optional_part_passes_a_server_side_dry_run(kube, namespace, tmp_path):
    rendered = kube.run(kube.helm, "template", "kz", str(CHART), "-n", namespace, *EVERYTHING).stdout
    kinds = sorted({d["kind"] for d in _docs(rendered)})
    expected = ("ClusterRole", "Ingress", "PodDisruptionBudget", "StatefulSet", "Deployment", "Secret", "NetworkPolicy")
    for kind in expected:
        assert kind in kinds, kinds
    # The chart's CRDs (Konnect, Kopf's peerings) are installed by Helm before the templates.
    kube.run(kube.kubectl, "apply", "--server-side", "--force-conflicts", "-f", str(CHART / "crds"))
    for crd in ("konnects.konnectz.io", "kopfpeerings.kopf.dev", "clusterkopfpeerings.kopf.dev"):
        kube.run(kube.kubectl, "wait", "--for=condition=Established", "--timeout=60s", f"crd/{crd}")
    manifest = tmp_path / "everything.yaml"
    manifest.write_text(rendered)
    applied = kube.run(kube.kubectl, "apply", "--dry-run=server", "-n", namespace, "-f", str(manifest))
    assert "(server dry run)" in applied.stdout
    assert applied.stdout.count("(server dry run)") == len(_docs(rendered))


def test_helm_install_creates_every_object_and_the_pods_become_ready(kube, namespace, tmp_path):
    rendered = _docs(kube.run(kube.helm, "template", "kz", str(CHART), "-n", namespace, *TRIAL).stdout)
    kube.run(
        kube.helm, "install", "kz", str(CHART), "-n", namespace, *TRIAL, "--wait", "--timeout", "120s", timeout=180
    )
    releases = json.loads(kube.run(kube.helm, "list", "-n", namespace, "-o", "json").stdout)
    assert [(r["name"], r["status"]) for r in releases] == [("kz", "deployed")]

    for doc in rendered:
        kind, name = doc["kind"], doc["metadata"]["name"]
        got = kube.run(kube.kubectl, "get", kind, name, "-n", namespace, "-o", "json", check=False)
        assert got.returncode == 0, f"{kind}/{name} was not created: {got.stderr}"
        labels = json.loads(got.stdout)["metadata"].get("labels", {})
        assert labels.get("app.kubernetes.io/instance") == "kz", f"{kind}/{name} lacks the release label"

    # Least privilege: the api's ServiceAccount may publish and annotate Konnects, nothing more.
    api_sa = f"system:serviceaccount:{namespace}:kz-konnectz-api"
    for verb, resource, allowed in [
        ("patch", "konnects.konnectz.io", True),
        ("create", "konnects.konnectz.io", True),
        ("delete", "konnects.konnectz.io", True),
        # The status is the operator's alone (docs/architecture.md, "Who writes a Konnect").
        ("patch", "konnects.konnectz.io --subresource=status", False),
        ("watch", "konnects.konnectz.io", True),
        ("create", "deployments.apps", False),
        ("get", "secrets", False),
        ("create", "secrets", True),  # the webhook token of each Konnect: written, never read
        ("list", "secrets", False),
    ]:
        args = ["auth", "can-i", verb, *resource.split(), "-n", namespace, "--as", api_sa]
        can = kube.run(kube.kubectl, *args, check=False)
        assert (can.stdout.strip() == "yes") is allowed, (verb, resource, can.stdout, can.stderr)

    # The operator writes each Konnect's credentials Secret but may not list or watch Secrets.
    operator_sa = f"system:serviceaccount:{namespace}:kz-konnectz-operator"
    for verb, allowed in [("create", True), ("get", True), ("delete", True), ("list", False), ("watch", False)]:
        can = kube.run(
            kube.kubectl, "auth", "can-i", verb, "secrets", "-n", namespace, "--as", operator_sa, check=False
        )
        assert (can.stdout.strip() == "yes") is allowed, (verb, can.stdout, can.stderr)

    # A viewer (the cluster's `view` role, into which the chart aggregates its Konnect viewer role)
    # reads Konnects, whose spec and status hold no token, but not the Secrets that hold them.
    kube.run(kube.kubectl, "create", "serviceaccount", "viewer", "-n", namespace)
    kube.run(
        kube.kubectl, "create", "rolebinding", "viewer", "-n", namespace, "--clusterrole=view",
        f"--serviceaccount={namespace}:viewer",
    )  # fmt: skip
    viewer = f"system:serviceaccount:{namespace}:viewer"

    def viewer_can(verb: str, resource: str) -> bool:
        can = kube.run(kube.kubectl, "auth", "can-i", verb, resource, "-n", namespace, "--as", viewer, check=False)
        return can.stdout.strip() == "yes"

    deadline = time.monotonic() + 30  # the controller-manager aggregates the role
    while not viewer_can("get", "konnects.konnectz.io") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert viewer_can("get", "konnects.konnectz.io") and viewer_can("list", "konnects.konnectz.io")
    assert not viewer_can("get", "secrets") and not viewer_can("patch", "konnects.konnectz.io")

    # The shared runner pool runs as one Deployment that only takes pool runs, and the operator knows its Service.
    pool = next(d for d in rendered if d["kind"] == "Deployment" and d["metadata"]["name"] == "kz-konnectz-runner-pool")
    pool_env = {e["name"]: e.get("value") for e in pool["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert pool_env["KONNECTZ_POOL"] == "true"
    operator = next(
        d for d in rendered if d["kind"] == "Deployment" and d["metadata"]["name"] == "kz-konnectz-operator"
    )
    operator_env = {e["name"]: e.get("value") for e in operator["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert operator_env["KONNECTZ_RUNNER_POOL_SERVICE"] == "kz-konnectz-runner-pool"

    # The generated dev secrets are real random strings and survive an upgrade unchanged.
    secrets = [d for d in rendered if d["kind"] == "Secret"]
    assert secrets
    before = {
        s["metadata"]["name"]: json.loads(
            kube.run(kube.kubectl, "get", "secret", s["metadata"]["name"], "-n", namespace, "-o", "json").stdout
        )["data"]
        for s in secrets
    }
    kube.run(kube.helm, "upgrade", "kz", str(CHART), "-n", namespace, *TRIAL, timeout=180)
    for name, data in before.items():
        after = json.loads(kube.run(kube.kubectl, "get", "secret", name, "-n", namespace, "-o", "json").stdout)["data"]
        assert after == data, f"secret {name} changed on upgrade"

    kube.run(kube.helm, "uninstall", "kz", "-n", namespace, "--wait", timeout=180)
    left = kube.run(kube.kubectl, "get", "deployments,statefulsets", "-n", namespace, "-o", "name").stdout
    assert left.strip() == ""


def _cluster_scoped(docs: list[dict]) -> list[str]:
    return sorted(f"{d['kind']}/{d['metadata']['name']}" for d in docs if d["kind"].startswith("Cluster"))


def test_cluster_scoped_names_carry_the_release_and_its_namespace(kube):
    for extra in ([], ["--set", "operator.clusterWide=true"]):
        one = _docs(kube.run(kube.helm, "template", "kz", str(CHART), "-n", "team-a", *TRIAL, *extra).stdout)
        two = _docs(kube.run(kube.helm, "template", "kz", str(CHART), "-n", "team-b", *TRIAL, *extra).stdout)
        assert _cluster_scoped(one), "the chart renders cluster-scoped objects"
        assert not set(_cluster_scoped(one)) & set(_cluster_scoped(two)), (_cluster_scoped(one), _cluster_scoped(two))
        assert all("team-a" in name for name in _cluster_scoped(one))
        # A binding names the ClusterRole of its own release.
        for doc in one:
            if doc["kind"] == "ClusterRoleBinding":
                assert "team-a" in doc["roleRef"]["name"]


def test_the_operator_runs_two_replicas_in_one_peering_with_a_disruption_budget(kube):
    docs = _docs(kube.run(kube.helm, "template", "kz", str(CHART), "-n", "team-a", *TRIAL).stdout)
    operator = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "kz-konnectz-operator")
    assert operator["spec"]["replicas"] == 2
    container = operator["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["POD_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    peering = next(d for d in docs if d["kind"] == "KopfPeering")
    assert env["KONNECTZ_PEERING"]["value"] == peering["metadata"]["name"]
    assert peering["metadata"]["namespace"] == "team-a"
    budget = next(d for d in docs if d["kind"] == "PodDisruptionBudget" and "operator" in d["metadata"]["name"])
    assert budget["spec"]["minAvailable"] == 1
    assert (
        budget["spec"]["selector"]["matchLabels"].items() <= operator["spec"]["template"]["metadata"]["labels"].items()
    )
    role = next(d for d in docs if d["kind"] == "Role" and d["metadata"]["name"] == "kz-konnectz-operator")
    assert any("kopfpeerings" in rule["resources"] and "patch" in rule["verbs"] for rule in role["rules"])

    single = _docs(kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL, "--set", "operator.replicas=1").stdout)
    assert not [d for d in single if d["kind"] == "PodDisruptionBudget" and "operator" in d["metadata"]["name"]]


def test_a_second_release_in_another_namespace_installs(kube, namespace):
    """Two releases side by side: one with the same name in another namespace would collide on
    cluster-scoped names if they carried the release only; the second here also has a name of its own."""
    other = f"{namespace}-b"
    releases = {namespace: "kz", other: "kzb"}
    names: list[str] = []
    for ns, release in releases.items():
        kube.run(
            kube.helm, "install", release, str(CHART), "-n", ns, "--create-namespace", *TRIAL, "--wait", "--timeout",
            "120s", timeout=180,
        )  # fmt: skip
    try:
        # A third, same name as the first in yet another namespace: the API server accepts every object.
        kube.run(
            kube.helm, "install", "kz", str(CHART), "-n", f"{namespace}-c", "--create-namespace", *TRIAL,
            "--dry-run=server", timeout=120,
        )  # fmt: skip
        for ns, release in releases.items():
            listed = json.loads(kube.run(kube.helm, "list", "-n", ns, "-o", "json").stdout)
            assert [(r["name"], r["status"]) for r in listed] == [(release, "deployed")]
            # Each operator is bound to its own ClusterRole.
            manifest = _docs(kube.run(kube.helm, "get", "manifest", release, "-n", ns).stdout)
            (name,) = [d["metadata"]["name"] for d in manifest if d["kind"] == "ClusterRoleBinding"]
            assert name.startswith(f"{release}-konnectz-")  # the namespace follows, shortened with a hash when long
            binding = json.loads(kube.run(kube.kubectl, "get", "clusterrolebinding", name, "-o", "json").stdout)
            assert binding["subjects"][0]["namespace"] == ns
            names.append(name)
            deployment = f"{release}-konnectz-operator"
            ready = kube.run(kube.kubectl, "get", "deployment", deployment, "-n", ns, "-o", "json").stdout
            assert json.loads(ready)["status"].get("readyReplicas") == 2
        assert names[0] != names[1]
    finally:
        for ns, release in reversed(releases.items()):
            kube.run(kube.helm, "uninstall", release, "-n", ns, "--wait", timeout=180, check=False)
        for ns in (other, f"{namespace}-c"):
            kube.run(kube.kubectl, "delete", "namespace", ns, "--wait=false", check=False)


def test_an_install_without_a_default_storage_class_says_what_to_set(kube, namespace):
    # The test cluster has no StorageClass: with persistence on, the install stops at once.
    refused = kube.run(
        kube.helm, "install", "kz", str(CHART), "-n", namespace, "--set", "env=test", check=False, timeout=120
    )
    assert refused.returncode != 0
    assert "no default StorageClass" in refused.stderr
    assert "nats.persistence.storageClass=<class>" in refused.stderr
    assert "postgresql.persistence.enabled=false" in refused.stderr
    assert kube.run(kube.helm, "list", "-n", namespace, "-q").stdout.strip() == ""
    # helm template (no cluster to ask) renders the claims as before.
    rendered = _docs(kube.run(kube.helm, "template", "kz", str(CHART), "--set", "env=test").stdout)
    assert any(d["kind"] == "StatefulSet" and d["spec"].get("volumeClaimTemplates") for d in rendered)


def _pool_scaling(kube, *extra: str) -> tuple[dict, list[dict]]:
    docs = _docs(kube.run(kube.helm, "template", "kz", str(CHART), "-n", "kz", *TRIAL, *extra).stdout)
    (pool,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "kz-konnectz-runner-pool"]
    scalers = [d for d in docs if d["kind"] in ("ScaledObject", "HorizontalPodAutoscaler")]
    return pool, scalers


def test_the_pool_scales_with_keda_on_its_consumer_backlog_or_with_an_hpa(kube, namespace, tmp_path):
    pool, scalers = _pool_scaling(kube)
    assert scalers == [] and pool["spec"]["replicas"] == 2  # off by default: a fixed pool

    pool, (scaled,) = _pool_scaling(
        kube, "--set", "runnerPool.autoscaling.mode=keda", "--set", "runnerPool.autoscaling.maxReplicas=30"
    )
    assert "replicas" not in pool["spec"]  # KEDA owns the replica count
    assert scaled["kind"] == "ScaledObject" and scaled["spec"]["scaleTargetRef"]["name"] == pool["metadata"]["name"]
    assert (scaled["spec"]["minReplicaCount"], scaled["spec"]["maxReplicaCount"]) == (2, 30)
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "nats-jetstream"
    assert trigger["metadata"]["stream"] == "KZ_RUNS" and trigger["metadata"]["consumer"] == "runner-pool"
    assert trigger["metadata"]["natsServerMonitoringEndpoint"] == "kz-konnectz-nats-headless.kz.svc.cluster.local:8222"
    assert trigger["metadata"]["lagThreshold"] == "200"

    pool, (hpa,) = _pool_scaling(kube, "--set", "runnerPool.autoscaling.mode=hpa")
    assert hpa["kind"] == "HorizontalPodAutoscaler" and "replicas" not in pool["spec"]
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 70
    # The HPA is a valid object for the API server.
    hpa["metadata"].pop("namespace")  # rendered for release namespace kz; checked in the test's own
    manifest = tmp_path / "hpa.yaml"
    manifest.write_text(yaml.safe_dump(hpa))
    applied = kube.run(kube.kubectl, "apply", "--dry-run=server", "-n", namespace, "-f", str(manifest))
    assert "(server dry run)" in applied.stdout

    wrong = kube.run(
        kube.helm, "template", "kz", str(CHART), *TRIAL, "--set", "runnerPool.autoscaling.mode=vpa", check=False
    )
    assert wrong.returncode != 0 and "/runnerPool/autoscaling/mode" in wrong.stderr
    external = kube.run(
        kube.helm, "template", "kz", str(CHART), *TRIAL, "--set", "nats.enabled=false", "--set", "nats.url=nats://n:4222",
        "--set", "runnerPool.autoscaling.mode=keda", check=False,
    )  # fmt: skip
    assert external.returncode != 0 and "natsMonitoringEndpoint is required" in external.stderr


def test_the_chart_points_the_api_and_the_pool_at_the_catalogue_in_their_images(kube):
    docs = _docs(kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL).stdout)
    for name in ("kz-konnectz-api", "kz-konnectz-runner-pool"):
        (deployment,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == name]
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["KONNECTZ_CATALOGUE_DIR"] == "/app/catalogue", name


def test_nats_max_payload_is_stated_and_above_the_streams_limits(kube):
    from konnectz_contracts.limits import EVENT_MAX_BYTES, NATS_MAX_PAYLOAD, RUN_MAX_BYTES

    rendered = kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL).stdout
    (conf,) = [d for d in _docs(rendered) if d["kind"] == "ConfigMap" and "nats.conf" in d.get("data", {})]
    assert f"max_payload: {NATS_MAX_PAYLOAD}" in conf["data"]["nats.conf"]
    assert NATS_MAX_PAYLOAD > EVENT_MAX_BYTES > RUN_MAX_BYTES

    small = kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL, "--set", "nats.maxPayload=1048576", check=False)
    assert small.returncode != 0 and "maxPayload" in small.stderr


def test_admin_emails_name_the_administrators_of_the_api(kube):
    """``adminEmails`` becomes KONNECTZ_ADMIN_EMAILS of the api (and its migrate container); without it the
    variable is absent (no administrator is inferred); an entry that is not an e-mail is refused."""

    def api_env(*extra: str) -> list[dict[str, str | None]]:
        docs = _docs(kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL, *extra).stdout)
        (deployment,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "kz-konnectz-api"]
        pod = deployment["spec"]["template"]["spec"]
        return [{e["name"]: e.get("value") for e in c["env"]} for c in (*pod["initContainers"], *pod["containers"])]

    named = api_env("--set", "adminEmails={Ops@Example.com,second@example.com}")
    assert [env["KONNECTZ_ADMIN_EMAILS"] for env in named] == ["Ops@Example.com,second@example.com"] * 2
    assert all("KONNECTZ_ADMIN_EMAILS" not in env for env in api_env())
    wrong = kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL, "--set", "adminEmails={ops}", check=False)
    assert wrong.returncode != 0 and "adminEmails" in wrong.stderr


def test_namespace_bindings_become_the_apis_bindings(kube):
    """``namespaceBindings`` becomes KONNECTZ_NAMESPACE_BINDINGS of the api (applied at its start; docs/security.md,
    "Who may publish as whom"); absent without it; a namespace bound twice or an owner that is no e-mail refused."""

    def api_env(*extra: str) -> dict[str, str | None]:
        docs = _docs(kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL, *extra).stdout)
        (deployment,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "kz-konnectz-api"]
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        return {e["name"]: e.get("value") for e in container["env"]}

    bound = api_env(
        "--set", "namespaceBindings[0].namespace=konnectz", "--set", "namespaceBindings[0].owner=a@example.com",
        "--set", "namespaceBindings[1].namespace=team-b", "--set", "namespaceBindings[1].owner=b@example.com",
    )  # fmt: skip
    assert bound["KONNECTZ_NAMESPACE_BINDINGS"] == "konnectz=a@example.com,team-b=b@example.com"
    assert "KONNECTZ_NAMESPACE_BINDINGS" not in api_env()
    for wrong in (
        ["namespaceBindings[0].namespace=a", "namespaceBindings[0].owner=a@example.com",
         "namespaceBindings[1].namespace=a", "namespaceBindings[1].owner=b@example.com"],
        ["namespaceBindings[0].namespace=a", "namespaceBindings[0].owner=nobody"],
        ["namespaceBindings[0].namespace=Team_A", "namespaceBindings[0].owner=a@example.com"],
    ):  # fmt: skip
        args = [arg for value in wrong for arg in ("--set", value)]
        done = kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL, *args, check=False)
        assert done.returncode != 0 and "namespaceBindings" in done.stderr, wrong


def test_allowed_runner_images_reach_the_operator(kube):
    """``operator.allowedRunnerImages`` becomes KONNECTZ_RUNNER_IMAGES of the operator (the images a
    Konnect may name in spec.image besides runner.image); empty by default; a comma is refused."""

    def operator_env(*extra: str) -> dict[str, str | None]:
        docs = _docs(kube.run(kube.helm, "template", "kz", str(CHART), *TRIAL, *extra).stdout)
        (deployment,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("operator")]
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        return {e["name"]: e.get("value") for e in container["env"]}

    assert operator_env()["KONNECTZ_RUNNER_IMAGES"] == ""
    listed = operator_env("--set", "operator.allowedRunnerImages={reg.example.com/runner:1.4.0,reg.example.com/r:2}")
    assert listed["KONNECTZ_RUNNER_IMAGES"] == "reg.example.com/runner:1.4.0,reg.example.com/r:2"
    wrong = kube.run(
        kube.helm, "template", "kz", str(CHART), *TRIAL, "--set-json", 'operator.allowedRunnerImages=["a,b"]',
        check=False,
    )  # fmt: skip
    assert wrong.returncode != 0 and "allowedRunnerImages" in wrong.stderr


# --- Network policies (networkPolicy.enabled) -----------------------------------------------------------------------
# The API server only stores NetworkPolicies; the test nodes (kwok) enforce none, so these tests check what the
# policies select and allow, and that the API server accepts them, never that a connection is refused.

PRIVATE = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]


def _konnect(name: str, namespace: str, trigger: dict) -> dict:
    """A dedicated Konnect as the operator receives it."""
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "konnectId": 9,
            "trigger": trigger,
            "flow": {
                "version": 1, "name": name, "trigger_id": "node-1", "trigger": {"kind": trigger["kind"]},
                "steps": [{"kind": "api_call", "id": "node-2", "name": "Call", "method": "GET",
                           "url": "https://crm.example.com/api"}],
            },
        },
    }  # fmt: skip


def _operator_runner_pods(namespace: str) -> dict[str, dict[str, str]]:
    """Labels of the runner pods the operator renders (a webhook Deployment, a schedule CronJob's Job)."""
    from konnectz_operator.config import OperatorSettings
    from konnectz_operator.render import render_children

    settings = OperatorSettings(credentials_key="k" * 32, credentials_url="http://kz-konnectz-api/x")
    pods: dict[str, dict[str, str]] = {}
    for trigger in ({"kind": "webhook", "tokenSecret": "t"}, {"kind": "schedule", "schedule": "*/5 * * * *"}):
        for child in render_children(_konnect(f"k-{trigger['kind']}", namespace, trigger), settings):
            if child["kind"] == "Deployment":
                pods[f"operator Deployment ({trigger['kind']})"] = child["spec"]["template"]["metadata"]["labels"]
            elif child["kind"] == "CronJob":
                job = child["spec"]["jobTemplate"]["spec"]["template"]
                pods[f"operator CronJob ({trigger['kind']})"] = job["metadata"]["labels"]
    assert len(pods) == 2, pods
    return pods


def _selects(selector: dict, labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, selector  # the chart uses matchLabels only
    return selector.get("matchLabels", {}).items() <= labels.items()


def _peer_selects(peer: dict, policy_ns: str, pod_ns: str, labels: dict[str, str]) -> bool:
    """Whether a NetworkPolicyPeer (podSelector / namespaceSelector; ipBlocks never name pods) selects the pod."""
    if "ipBlock" in peer:
        return False
    if "namespaceSelector" in peer:
        ns_ok = _selects(peer["namespaceSelector"], {"kubernetes.io/metadata.name": pod_ns})
    else:
        ns_ok = pod_ns == policy_ns
    return ns_ok and _selects(peer.get("podSelector", {}), labels)


def _chart_pods(docs: list[dict]) -> dict[str, tuple[str, dict[str, str]]]:
    """Namespace and labels of the pods of every workload the chart renders, by component."""
    pods = {}
    for doc in docs:
        if doc["kind"] in ("Deployment", "StatefulSet"):
            labels = doc["spec"]["template"]["metadata"]["labels"]
            pods[labels["app.kubernetes.io/component"]] = (doc["metadata"].get("namespace", "team-a"), labels)
    return pods


def _policies(*extra: str, kube, namespace: str = "team-a") -> tuple[list[dict], dict[str, dict]]:
    docs = _docs(kube.run(kube.helm, "template", "kz", str(CHART), "-n", namespace, *TRIAL, *extra).stdout)
    policies = {d["metadata"]["name"].removeprefix("kz-konnectz-"): d for d in docs if d["kind"] == "NetworkPolicy"}
    for policy in policies.values():
        policy["metadata"].setdefault("namespace", namespace)
    return docs, policies


def test_network_policies_select_the_pods_they_are_meant_for(kube):
    docs, policies = _policies(kube=kube)
    assert set(policies) == {"api", "operator", "nats", "postgresql", "runner-pool", "runners"}
    pods = _chart_pods(docs)
    assert set(pods) == {"api", "operator", "nats", "postgresql", "runner-pool"}
    runners = _operator_runner_pods("team-a")

    # Each policy selects the pods of its component (and no other); the runners' policy selects the operator's pods.
    for name, policy in policies.items():
        selected = {c for c, (ns, labels) in pods.items() if _selects(policy["spec"]["podSelector"], labels)}
        selected |= {r for r, labels in runners.items() if _selects(policy["spec"]["podSelector"], labels)}
        expected = set(runners) if name == "runners" else {name}
        assert selected == expected, (name, selected)
        assert policy["metadata"]["namespace"] == "team-a"

    def allowed_from(policy: dict, port: int) -> set[str]:
        """The chart's and the operator's pods an ingress rule of the policy admits on the port."""
        everyone = {**pods, **{r: ("team-a", labels) for r, labels in runners.items()}}
        admitted = set()
        for rule in policy["spec"]["ingress"]:
            if rule.get("ports") and port not in [p["port"] for p in rule["ports"]]:
                continue
            for component, (ns, labels) in everyone.items():
                if "from" not in rule or any(
                    _peer_selects(peer, policy["metadata"]["namespace"], ns, labels) for peer in rule["from"]
                ):
                    admitted.add(component)
        return admitted

    # PostgreSQL: the api only. NATS: the api, the operator, the pool and the dedicated runners (and its peers).
    assert allowed_from(policies["postgresql"], 5432) == {"api"}
    assert allowed_from(policies["nats"], 4222) == {"api", "operator", "runner-pool", "nats", *runners}
    assert allowed_from(policies["nats"], 6222) == {"nats"}
    # From outside the release: the api's HTTP port and the runners' webhook port only; nothing calls the operator.
    open_ports = {
        name: sorted(
            p["port"] for rule in policy["spec"].get("ingress", []) if "from" not in rule for p in rule["ports"]
        )
        for name, policy in policies.items()
    }
    assert open_ports == {
        "api": [8080], "runner-pool": [8081], "runners": [8081], "operator": [], "nats": [], "postgresql": [],
    }  # fmt: skip
    assert policies["operator"]["spec"]["ingress"] == [] and "Ingress" in policies["operator"]["spec"]["policyTypes"]


def _egress_to(policy: dict, namespace: str, labels: dict[str, str], port: int) -> bool:
    """Whether an egress rule of the policy lets its pods reach the pod (by selector, or any destination)."""
    for rule in policy["spec"]["egress"]:
        if rule.get("ports") and port not in [p["port"] for p in rule["ports"]]:
            continue
        peers = rule.get("to")
        if peers is None or any(_peer_selects(p, policy["metadata"]["namespace"], namespace, labels) for p in peers):
            return True
    return False


def _internet(policy: dict) -> list[dict]:
    return [p["ipBlock"] for rule in policy["spec"]["egress"] for p in rule.get("to", []) if "ipBlock" in p]


def test_runners_reach_nats_the_api_and_the_internet_but_never_postgresql(kube):
    docs, policies = _policies(kube=kube)
    pods = _chart_pods(docs)
    for name in ("runner-pool", "runners"):
        policy = policies[name]
        assert set(policy["spec"]["policyTypes"]) == {"Ingress", "Egress"}
        assert _egress_to(policy, *pods["nats"], 4222), name
        assert _egress_to(policy, *pods["api"], 8080), name  # the credential broker (the api Service's target port)
        assert not _egress_to(policy, *pods["postgresql"], 5432), name
        assert not any(p["port"] == 5432 for rule in policy["spec"]["egress"] for p in rule.get("ports", [])), name
        dns = [rule for rule in policy["spec"]["egress"] if {p["port"] for p in rule.get("ports", [])} == {53}]
        assert [sorted(p["protocol"] for p in rule["ports"]) for rule in dns] == [["TCP", "UDP"]]
        # The internet: every address but the private ranges (where the cluster's pods and Services live).
        blocks = {b["cidr"]: b.get("except", []) for b in _internet(policy)}
        assert set(blocks) == {"0.0.0.0/0", "::/0"}
        assert set(PRIVATE) | {"169.254.0.0/16"} <= set(blocks["0.0.0.0/0"]) and "fc00::/7" in blocks["::/0"]
        # Without KONNECTZ_ALLOW_PRIVATE_NETWORKS, no private network is reachable by address.
        assert all(b["cidr"] in blocks for b in _internet(policy))

    api = policies["api"]
    for component, port in (("postgresql", 5432), ("nats", 4222)):
        assert _egress_to(api, *pods[component], port), component
    assert {p["port"] for rule in api["spec"]["egress"] for p in rule.get("ports", [])} >= {443, 6443, 53}
    operator = policies["operator"]
    assert _egress_to(operator, *pods["nats"], 4222)  # the pool's flows (KZ_KONNECTS)
    assert not _egress_to(operator, *pods["postgresql"], 5432)
    assert {p["port"] for rule in operator["spec"]["egress"] for p in rule["ports"]} == {53, 443, 6443, 4222}


def test_network_policies_follow_the_konnects_namespace_and_the_allowed_private_networks(kube):
    docs, policies = _policies(
        "--set", "konnects.namespace=flows",
        "--set", "runner.env.KONNECTZ_ALLOW_PRIVATE_NETWORKS=10.1.0.0/16\\,10.2.3.4",
        kube=kube,
    )  # fmt: skip
    pods = _chart_pods(docs)
    assert pods["runner-pool"][0] == "flows"
    assert policies["runners"]["metadata"]["namespace"] == policies["runner-pool"]["metadata"]["namespace"] == "flows"
    runners = _operator_runner_pods("flows")
    nats_from = [peer for rule in policies["nats"]["spec"]["ingress"] for peer in rule["from"]]
    for labels in runners.values():
        assert any(_peer_selects(peer, "team-a", "flows", labels) for peer in nats_from)
        assert not any(_peer_selects(peer, "team-a", "team-a", labels) for peer in nats_from)  # not another ns
    for name in ("runner-pool", "runners"):
        assert _egress_to(policies[name], *pods["nats"], 4222)  # across namespaces
        assert _egress_to(policies[name], *pods["api"], 8080)
        cidrs = [b["cidr"] for b in _internet(policies[name])]
        assert cidrs == ["0.0.0.0/0", "::/0", "10.1.0.0/16", "10.2.3.4/32"], cidrs

    # operator.clusterWide: dedicated runners of every namespace may reach NATS.
    _, wide = _policies("--set", "operator.clusterWide=true", kube=kube)
    nats_from = [peer for rule in wide["nats"]["spec"]["ingress"] for peer in rule["from"]]
    assert any(_peer_selects(peer, "team-a", "elsewhere", runners["operator CronJob (schedule)"]) for peer in nats_from)


def test_network_policies_can_be_turned_off(kube):
    docs, policies = _policies("--set", "networkPolicy.enabled=false", kube=kube)
    assert policies == {} and docs


def test_the_api_server_accepts_the_network_policies_of_every_variant(kube, namespace, tmp_path):
    """External NATS and database (by port), allowed private networks of runners and api, KEDA, narrowed API server."""
    rendered = kube.run(
        kube.helm, "template", "kz", str(CHART), "-n", namespace, *TRIAL, "--show-only", "templates/networkpolicy.yaml",
        "--set", "nats.enabled=false", "--set", "nats.url=nats://nats.example.com:4333",
        "--set", "postgresql.enabled=false", "--set", "database.url=postgresql+psycopg://u:p@db.internal:6432/kz",
        "--set", "runner.env.KONNECTZ_ALLOW_PRIVATE_NETWORKS=10.1.0.0/16\\,10.2.3.4\\,fd00::1",
        "--set-json", 'api.extraEnv=[{"name":"KONNECTZ_ALLOW_PRIVATE_NETWORKS","value":"192.168.5.0/24"}]',
        "--set-json", 'networkPolicy.kubeApi.cidrs=["172.18.0.2/32"]',
        "--set-json",
        'networkPolicy.extraEgress.api=[{"to":[{"ipBlock":{"cidr":"10.9.0.0/16"}}],"ports":[{"port":25}]}]',
    ).stdout  # fmt: skip
    policies = {d["metadata"]["name"].removeprefix("kz-konnectz-"): d for d in _docs(rendered)}
    assert set(policies) == {"api", "operator", "runner-pool", "runners"}  # no in-chart NATS or PostgreSQL to guard
    ports = {
        name: {p["port"] for r in p_["spec"]["egress"] for p in r.get("ports", [])} for name, p_ in policies.items()
    }
    assert {6432, 4333, 25} <= ports["api"] and 4333 in ports["runners"] and 6432 not in ports["runners"]
    assert {"cidr": "192.168.5.0/24"} in _internet(policies["api"])
    assert {"cidr": "fd00::1/128"} in _internet(policies["runners"])
    manifest = tmp_path / "policies.yaml"
    manifest.write_text(rendered)
    applied = kube.run(kube.kubectl, "apply", "--dry-run=server", "-n", namespace, "-f", str(manifest))
    assert applied.stdout.count("(server dry run)") == 4


def _containers(docs: list[dict]) -> dict[str, dict]:
    """Every container (and init container) of the rendered workloads, by '<workload>/<container>'."""
    found = {}
    for d in docs:
        if d["kind"] in ("Deployment", "StatefulSet"):
            pod = d["spec"]["template"]["spec"]
            for c in [*pod.get("initContainers", []), *pod["containers"]]:
                found[f"{d['metadata']['name']}/{c['name']}"] = c
    return found


def test_nats_users_come_from_a_secret_and_each_component_gets_its_own(kube):
    """The chart's NATS has the users of konnectz_contracts.nats_auth, their passwords from a generated
    Secret (the runner's alone copied to the Konnects' namespace); each client gets its user by secretKeyRef."""
    from konnectz_contracts.nats_auth import COMPONENTS, authorization_conf

    args = ["template", "kz", str(CHART), "-n", "kz", *TRIAL, "--set", "konnects.namespace=flows"]
    docs = _docs(kube.run(kube.helm, *args).stdout)
    secrets = {(d["metadata"].get("namespace", "kz"), d["metadata"]["name"]): d for d in docs if d["kind"] == "Secret"}
    auth = secrets[("kz", "kz-konnectz-nats-auth")]
    assert sorted(auth["data"]) == ["api-password", "operator-password", "runner-password"]
    runner_copy = secrets[("flows", "kz-konnectz-nats-runner")]
    assert runner_copy["data"] == {"runner-password": auth["data"]["runner-password"]}
    (conf,) = [d for d in docs if d["kind"] == "ConfigMap" and "nats.conf" in d.get("data", {})]
    assert authorization_conf(COMPONENTS).strip() in conf["data"]["nats.conf"]  # one source

    containers = _containers(docs)
    nats_env = {e["name"]: e for e in containers["kz-konnectz-nats/nats"]["env"]}
    for user in COMPONENTS:
        ref = nats_env[f"KONNECTZ_NATS_{user.upper()}_PASSWORD"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": "kz-konnectz-nats-auth", "key": f"{user}-password"}
    expected = {
        "kz-konnectz-api/api": ("api", "kz-konnectz-nats-auth"),
        "kz-konnectz-api/migrate": ("api", "kz-konnectz-nats-auth"),
        "kz-konnectz-operator/operator": ("operator", "kz-konnectz-nats-auth"),
        "kz-konnectz-runner-pool/runner": ("runner", "kz-konnectz-nats-runner"),
    }
    for name, (user, secret) in expected.items():
        env = {e["name"]: e for e in containers[name]["env"]}
        assert env["KONNECTZ_NATS_USER"]["value"] == user, name
        assert env["KONNECTZ_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": secret, "key": f"{user}-password"}
    operator = {e["name"]: e.get("value") for e in containers["kz-konnectz-operator/operator"]["env"]}
    assert operator["KONNECTZ_NATS_RUNNER_USER"] == "runner"
    assert operator["KONNECTZ_NATS_RUNNER_SECRET"] == "kz-konnectz-nats-runner"
    for d in docs:  # no password as a plain value anywhere
        for c in _containers([d]).values():
            assert all("value" not in e for e in c.get("env", []) if e["name"].endswith("PASSWORD")), c["name"]

    own = _docs(kube.run(kube.helm, *args, "--set", "nats.auth.existingSecret=mine").stdout)
    assert not [d for d in own if d["kind"] == "Secret" and "nats" in d["metadata"]["name"]]
    env = {e["name"]: e for e in _containers(own)["kz-konnectz-runner-pool/runner"]["env"]}
    assert env["KONNECTZ_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "mine"


def test_nats_tls_is_rendered_for_the_server_and_its_clients(kube):
    args = ["template", "kz", str(CHART), "-n", "kz", *TRIAL, "--set", "nats.tls.enabled=true"]
    missing = kube.run(kube.helm, *args, check=False)
    assert missing.returncode != 0 and "nats.tls.secretName is required" in missing.stderr
    docs = _docs(kube.run(kube.helm, *args, "--set", "nats.tls.secretName=nats-tls").stdout)
    (conf,) = [d for d in docs if d["kind"] == "ConfigMap" and "nats.conf" in d.get("data", {})]
    assert "cert_file: /etc/nats-tls/tls.crt" in conf["data"]["nats.conf"]
    containers = _containers(docs)
    mounts = {m["mountPath"] for m in containers["kz-konnectz-nats/nats"]["volumeMounts"]}
    assert "/etc/nats-tls" in mounts
    for name in ("kz-konnectz-api/api", "kz-konnectz-operator/operator", "kz-konnectz-runner-pool/runner"):
        env = {e["name"]: e.get("value") for e in containers[name]["env"]}
        assert env["KONNECTZ_NATS_URL"] == "tls://kz-konnectz-nats.kz.svc:4222", name
        assert env["KONNECTZ_NATS_CA_FILE"] == "/etc/konnectz/nats-ca/ca.crt", name
        assert "/etc/konnectz/nats-ca" in {m["mountPath"] for m in containers[name]["volumeMounts"]}, name


def test_the_rendered_nats_config_refuses_anonymous_clients_and_serves_the_users(kube, tmp_path):
    """The chart's nats.conf, run by the nats-server of the devstack with the rendered Secret's
    passwords: anonymous clients are refused, the operator writes flows but cannot publish a run."""
    import asyncio
    import base64
    import subprocess

    import nats

    from konnectz_contracts.nats_auth import COMPONENTS, connect_options, password_env
    from konnectz_devstack._nats import nats_server_binary
    from konnectz_devstack._ports import free_port, wait_for_port

    docs = _docs(kube.run(kube.helm, "template", "kz", str(CHART), "-n", "kz", *TRIAL).stdout)
    (conf,) = [d for d in docs if d["kind"] == "ConfigMap" and "nats.conf" in d.get("data", {})]
    (secret,) = [d for d in docs if d["kind"] == "Secret" and d["metadata"]["name"] == "kz-konnectz-nats-auth"]
    passwords = {user: base64.b64decode(secret["data"][f"{user}-password"]).decode() for user in COMPONENTS}
    port, monitor = free_port(), free_port()
    text = (
        conf["data"]["nats.conf"]
        .replace("listen: 0.0.0.0:4222", f"listen: 127.0.0.1:{port}")
        .replace("http: 0.0.0.0:8222", f"http: 127.0.0.1:{monitor}")
        .replace("store_dir: /data", f"store_dir: {tmp_path / 'js'}")
        .replace("pid_file: /var/run/nats/nats.pid", f"pid_file: {tmp_path / 'nats.pid'}")
    )
    (tmp_path / "nats.conf").write_text(text)
    env = {"SERVER_NAME": "kz-0", **{password_env(user): pw for user, pw in passwords.items()}}
    log = (tmp_path / "nats.log").open("wb")
    command = [nats_server_binary(), "-c", str(tmp_path / "nats.conf")]
    server = subprocess.Popen(command, env=env, stdout=log, stderr=log)
    try:
        assert wait_for_port(port, timeout=20), (tmp_path / "nats.log").read_text()
        url = f"nats://127.0.0.1:{port}"

        async def scenario() -> None:
            try:
                await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=0, connect_timeout=2)
                raise AssertionError("an anonymous client was let in")
            except nats.errors.Error as exc:
                assert "Authorization Violation" in str(exc)
            errors: list[Exception] = []

            async def collect(exc: Exception) -> None:
                errors.append(exc)

            op = await nats.connect(url, error_cb=collect, **connect_options("operator", passwords["operator"]))
            js = op.jetstream()
            from konnectz_operator.pool import konnects_bucket

            await (await konnects_bucket(js)).put("konnect.1", b"{}")
            await op.publish("kz.runs.1", b"{}")
            await op.flush()
            await asyncio.sleep(0.3)
            assert any('publish to "kz.runs.1"' in str(e) for e in errors), errors
            await op.close()

        asyncio.run(scenario())
    finally:
        server.terminate()
        server.wait(10)


def test_nats_replicas_is_the_replica_count_of_every_component(kube):
    """nats.replicas: the NATS pods and KONNECTZ_NATS_REPLICAS of the api, the pool and the operator (which
    hands it to its runners); out of 1..5 the chart refuses to render."""
    for replicas in ("1", "3"):
        args = ["template", "kz", str(CHART), "-n", "kz", *TRIAL, "--set", f"nats.replicas={replicas}"]
        containers = _containers(_docs(kube.run(kube.helm, *args).stdout))
        for name in ("kz-konnectz-api/api", "kz-konnectz-operator/operator", "kz-konnectz-runner-pool/runner"):
            env = {e["name"]: e.get("value") for e in containers[name]["env"]}
            assert env["KONNECTZ_NATS_REPLICAS"] == replicas, name
    too_many = ["template", "kz", str(CHART), "-n", "kz", *TRIAL, "--set", "nats.replicas=6"]
    refused = kube.run(kube.helm, *too_many, check=False)
    assert refused.returncode != 0 and "maximum" in refused.stderr
