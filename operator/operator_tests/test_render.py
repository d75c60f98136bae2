from __future__ import annotations

import json
import re

import pytest

from konnectz_contracts.spec import FlowSpec
from konnectz_operator.config import OperatorSettings
from konnectz_operator.render import (
    FLOW_FILE,
    child_name,
    form_url,
    render_children,
    render_configmap,
    render_cronjob,
    render_deployment,
    render_ingress,
    render_service,
    webhook_url,
)

DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def _env(container: dict) -> dict[str, str]:
    return {item["name"]: item.get("value") for item in container["env"]}


def test_webhook_trigger_renders_configmap_deployment_service(konnect, settings):
    children = render_children(konnect(), settings)

    assert [c["kind"] for c in children] == ["ConfigMap", "Deployment", "Service"]
    assert {c["metadata"]["name"] for c in children} == {"kz-konnect-42"}
    assert {c["metadata"]["namespace"] for c in children} == {"team-a"}
    for child in children:
        labels = child["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == "konnectz-runner"
        assert labels["konnectz.io/konnect"] == "konnect-42"
        assert labels["konnectz.io/konnect-id"] == "42"


def test_deployment_runs_the_runner_with_the_mounted_flow(konnect, settings):
    k = konnect()
    dep = render_deployment(k, settings)
    cm = render_configmap(k, settings)
    pod = dep["spec"]["template"]["spec"]
    (container,) = pod["containers"]

    assert dep["spec"]["replicas"] == 1
    assert container["image"] == "registry.example.com/konnectz-runner:1.2.3"
    assert container["command"] == [
        "python",
        "-m",
        "konnectz_runner",
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        "8081",
    ]
    env = _env(container)
    assert env["KONNECTZ_SPEC_FILE"] == "/etc/konnectz/flow.json" == FLOW_FILE
    assert env["KONNECTZ_NATS_URL"] == "nats://nats.konnectz:4222"
    assert container["ports"] == [{"name": "http", "containerPort": 8081, "protocol": "TCP"}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    # The flow volume is the rendered ConfigMap, mounted where KONNECTZ_SPEC_FILE points.
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert mounts["flow"]["mountPath"] + "/flow.json" == env["KONNECTZ_SPEC_FILE"]
    assert mounts["flow"]["readOnly"] is True
    assert volumes["flow"]["configMap"]["name"] == cm["metadata"]["name"]
    assert volumes["flow"]["configMap"]["items"] == [{"key": "flow.json", "path": "flow.json"}]
    assert "flow.json" in cm["data"]
    # The selector must match the pod labels (the API server refuses the Deployment otherwise).
    selector = dep["spec"]["selector"]["matchLabels"]
    assert selector.items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    assert pod["automountServiceAccountToken"] is False
    assert container["securityContext"]["runAsNonRoot"] is True


def test_service_selects_the_runner_pods_on_the_named_port(konnect, settings):
    k = konnect()
    svc = render_service(k, settings)
    dep = render_deployment(k, settings)
    assert svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
    (port,) = svc["spec"]["ports"]
    assert port["targetPort"] == "http"
    assert port["port"] == 80
    assert DNS1035.match(svc["metadata"]["name"])


def test_runner_env_settings_are_added_but_cannot_override_the_spec_file(konnect):
    settings = OperatorSettings(runner_env={"KONNECTZ_API_URL": "http://api:8080", "KONNECTZ_SPEC_FILE": "/x"})
    env = _env(render_deployment(konnect(), settings)["spec"]["template"]["spec"]["containers"][0])
    assert env["KONNECTZ_API_URL"] == "http://api:8080"
    assert env["KONNECTZ_SPEC_FILE"] == FLOW_FILE


def test_runners_get_the_replica_count_of_the_streams_they_create(konnect, monkeypatch):
    """Every runner ensures the streams and buckets at start: with the operator's count (the chart's
    nats.replicas), never the default 1, which would bring a replicated install's streams down to one copy."""
    monkeypatch.setenv("KONNECTZ_NATS_REPLICAS", "3")
    settings = OperatorSettings()
    assert settings.nats_replicas == 3
    deployment = render_deployment(konnect(), settings)["spec"]["template"]["spec"]["containers"][0]
    cron = render_cronjob(konnect(trigger={"kind": "schedule", "schedule": "0 9 * * 1-5"}), settings)
    for container in (deployment, cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]):
        assert _env(container)["KONNECTZ_NATS_REPLICAS"] == "3"
    monkeypatch.setenv("KONNECTZ_NATS_REPLICAS", "6")
    with pytest.raises(ValueError, match="less than or equal to 5"):
        OperatorSettings()


def test_runners_get_the_runner_nats_user_and_its_password_only_by_secret_ref(konnect):
    settings = OperatorSettings(nats_runner_user="runner", nats_runner_secret="kz-konnectz-nats-runner")
    deployment = render_deployment(konnect(), settings)["spec"]["template"]["spec"]["containers"][0]
    cron = render_cronjob(konnect(trigger={"kind": "schedule", "schedule": "0 9 * * 1-5"}), settings)
    for container in (deployment, cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]):
        env = {item["name"]: item for item in container["env"]}
        assert env["KONNECTZ_NATS_USER"] == {"name": "KONNECTZ_NATS_USER", "value": "runner"}
        assert env["KONNECTZ_NATS_PASSWORD"] == {
            "name": "KONNECTZ_NATS_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": "kz-konnectz-nats-runner", "key": "runner-password"}},
        }
    # without the chart's settings (a NATS without users): no credentials
    assert "KONNECTZ_NATS_USER" not in _env(
        render_deployment(konnect(), OperatorSettings())["spec"]["template"]["spec"]["containers"][0]
    )


def test_schedule_trigger_renders_configmap_and_cronjob(konnect, settings):
    k = konnect(trigger={"kind": "schedule", "schedule": "*/15 * * * *", "timezone": "Europe/Berlin"})
    children = render_children(k, settings)

    assert [c["kind"] for c in children] == ["ConfigMap", "CronJob"]
    cron = children[1]
    assert cron["apiVersion"] == "batch/v1"
    assert cron["spec"]["schedule"] == "*/15 * * * *"
    assert cron["spec"]["timeZone"] == "Europe/Berlin"
    assert cron["spec"]["suspend"] is False
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["python", "-m", "konnectz_runner", "tick", "--spec-file", "/etc/konnectz/flow.json"]
    assert pod["restartPolicy"] == "Never"
    assert pod["volumes"][0]["configMap"]["name"] == children[0]["metadata"]["name"]
    assert webhook_url(k, settings) is None


def test_schedule_without_timezone_clears_it(konnect, settings):
    cron = render_cronjob(konnect(trigger={"kind": "schedule", "schedule": "0 9 * * 1-5"}), settings)
    # None (not absent) so that patching a CronJob whose timezone was removed clears it.
    assert cron["spec"]["timeZone"] is None


def test_paused_scales_to_zero_and_suspends(konnect, settings):
    dep = render_deployment(konnect(paused=True, replicas=3), settings)
    assert dep["spec"]["replicas"] == 0
    cron = render_cronjob(konnect(paused=True, trigger={"kind": "schedule", "schedule": "0 * * * *"}), settings)
    assert cron["spec"]["suspend"] is True


def test_replicas_and_image_overrides(konnect, settings):
    dep = render_deployment(konnect(replicas=3, image="example.com/runner:canary"), settings)
    assert dep["spec"]["replicas"] == 3
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "example.com/runner:canary"


def test_renders_ignore_identity_and_status_of_the_owner(konnect, settings):
    a = konnect()
    b = konnect()
    b["metadata"].update(uid="ffffffff-0000-0000-0000-000000000000", resourceVersion="9", generation=12)
    b["metadata"]["labels"] = {"something": "else"}
    b["status"] = {"phase": "Failed"}
    # Same flow, different key order: same canonical JSON.
    b["spec"]["flow"] = dict(reversed(list(b["spec"]["flow"].items())))

    assert render_children(a, settings) == render_children(b, settings)
    assert json.dumps(render_children(a, settings), sort_keys=True) == json.dumps(
        render_children(b, settings), sort_keys=True
    )
    for child in render_children(a, settings):
        assert "ownerReferences" not in child["metadata"]


def test_a_changed_flow_changes_the_pod_template(konnect, settings):
    a = konnect()
    b = konnect()
    b["spec"]["flow"]["steps"][0]["url"] = "https://crm.example.com/api/v2/contacts"
    ann_a = render_deployment(a, settings)["spec"]["template"]["metadata"]["annotations"]
    ann_b = render_deployment(b, settings)["spec"]["template"]["metadata"]["annotations"]
    assert ann_a["konnectz.io/flow-sha256"] != ann_b["konnectz.io/flow-sha256"]


def test_flow_json_round_trips_through_flowspec(konnect, flow, settings, token):
    k = konnect(flow=flow())
    data = render_configmap(k, settings)["data"]["flow.json"]

    # spec.flow with the spec's ids, and no token (the runner has it from the Konnect's Secret).
    assert json.loads(data) == {**k["spec"]["flow"], "konnect_id": 42, "owner_id": 7}
    assert token not in data
    parsed = FlowSpec.model_validate_json(data.replace('"kind": "webhook"', f'"kind": "webhook", "token": "{token}"'))
    assert parsed == FlowSpec.model_validate(flow())
    assert "ünïcode" in data


def test_child_names_are_valid_and_bounded():
    assert child_name("konnect-42") == "kz-konnect-42"
    assert child_name("42.example") == "kz-42-example"
    long_a = child_name("k" * 200 + "a")
    long_b = child_name("k" * 200 + "b")
    assert long_a != long_b
    for name in (long_a, long_b, child_name("x" * 49 + "-" + "y" * 10)):
        assert len(name) <= 52
        assert DNS1035.match(name), name


def test_long_konnect_names_keep_label_values_valid(konnect, settings):
    name = "konnect-" + "z" * 120
    labels = render_configmap(konnect(name=name), settings)["metadata"]["labels"]
    assert len(labels["konnectz.io/konnect"]) <= 63
    assert re.match(r"^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$", labels["konnectz.io/konnect"])


def test_webhook_url_defaults_to_the_in_cluster_service(konnect, settings, token):
    url = webhook_url(konnect(), settings)
    assert url == "http://kz-konnect-42.team-a.svc/hooks/<secret:konnect-42-trigger>"
    assert token not in url  # status is readable by whoever may read Konnects


def test_webhook_url_uses_the_public_base(konnect, token):
    settings = OperatorSettings(webhook_base_url="https://hooks.example.com/")
    assert webhook_url(konnect(), settings) == "https://hooks.example.com/hooks/<secret:konnect-42-trigger>"


def test_the_runner_knows_the_public_base_for_its_resume_urls(konnect, settings):
    """A Wait for a Call's resume URL is made by the runner (docs/waits.md): it gets the public base."""
    deployment = next(c for c in render_children(konnect(), settings) if c["kind"] == "Deployment")
    assert "KONNECTZ_WEBHOOK_BASE_URL" not in _env(deployment["spec"]["template"]["spec"]["containers"][0])
    public = settings.model_copy(update={"webhook_base_url": "https://hooks.example.com"})
    deployment = next(c for c in render_children(konnect(), public) if c["kind"] == "Deployment")
    env = _env(deployment["spec"]["template"]["spec"]["containers"][0])
    assert env["KONNECTZ_WEBHOOK_BASE_URL"] == "https://hooks.example.com"


def test_ingress_routes_exactly_the_token_path(konnect, token):
    settings = OperatorSettings(webhook_ingress_host="hooks.example.com", webhook_ingress_class="nginx")
    k = konnect()
    kinds = [c["kind"] for c in render_children(k, settings)]
    assert kinds == ["ConfigMap", "Deployment", "Service", "Ingress"]
    ing = render_ingress(k, settings, token)
    assert ing["spec"]["ingressClassName"] == "nginx"
    (rule,) = ing["spec"]["rules"]
    assert rule["host"] == "hooks.example.com"
    (path,) = rule["http"]["paths"]
    assert path == {
        "path": f"/hooks/{token}",
        "pathType": "Exact",
        "backend": {"service": {"name": "kz-konnect-42", "port": {"name": "http"}}},
    }


@pytest.mark.parametrize("trigger", [{"kind": "webhook"}, {"kind": "schedule", "schedule": "0 * * * *"}])
def test_renders_are_json_documents(konnect, settings, trigger):
    children = render_children(konnect(trigger=trigger), settings)
    assert json.loads(json.dumps(children)) == children


def test_a_form_konnect_routes_its_form_page_and_a_polling_konnect_gets_no_ingress(konnect, flow, token):
    settings = OperatorSettings(webhook_ingress_host="hooks.example.com", webhook_base_url="https://hooks.example.com")
    form_trigger = {"kind": "form", "token": token, "fields": [{"key": "email", "label": "E-mail"}]}
    form = konnect(trigger={"kind": "form"}, flow=flow(trigger=form_trigger))
    (path,) = render_ingress(form, settings, token)["spec"]["rules"][0]["http"]["paths"]
    assert path["path"] == f"/forms/{token}"
    assert form_url(form, settings) == "https://hooks.example.com/forms/<secret:konnect-42-trigger>"
    assert webhook_url(form, settings) is None
    polling = [c["kind"] for c in render_children(konnect(trigger={"kind": "polling"}), settings)]
    assert polling == ["ConfigMap", "Deployment", "Service"]
    assert form_url(konnect(), settings) is None  # a webhook konnect has no form


def test_a_credentials_key_gives_each_konnect_a_secret_with_its_own_token_only(konnect, settings):
    import base64

    from konnectz_contracts.broker_token import konnect_token

    configured = settings.model_copy(
        update={"credentials_key": "k" * 40, "credentials_url": "http://api.konnectz.svc/api/v1/internal/credentials"}
    )
    children = render_children(konnect(), configured)
    assert [c["kind"] for c in children] == ["Secret", "ConfigMap", "Deployment", "Service"]
    secret = children[0]
    token = base64.b64decode(secret["data"]["credentials-token"]).decode()
    assert token == konnect_token("k" * 40, 42, "0b5e7c9e-1111-2222-3333-444455556666")  # bound to the uid
    # A copy of the Konnect under another name (another uid) gets another token, which the api refuses.
    copy = konnect(name="copy")
    copy["metadata"]["uid"] = "another-uid"
    copied = base64.b64decode(render_children(copy, configured)[0]["data"]["credentials-token"]).decode()
    assert copied != token and copied == konnect_token("k" * 40, 42, "another-uid")
    assert "k" * 40 not in json.dumps(children)  # the key itself goes nowhere
    for child in (
        children[2],
        render_cronjob(konnect(trigger={"kind": "schedule", "schedule": "0 9 * * 1-5"}), configured),
    ):
        pod = (
            child["spec"]["template"]["spec"]
            if child["kind"] == "Deployment"
            else child["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        )
        env = {item["name"]: item for item in pod["containers"][0]["env"]}
        assert env["KONNECTZ_CREDENTIALS_URL"]["value"].endswith("/internal/credentials")
        ref = env["KONNECTZ_CREDENTIALS_TOKEN"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": "kz-konnect-42", "key": "credentials-token"}
    # Without a key: no Secret, no token variable.
    assert "Secret" not in [c["kind"] for c in render_children(konnect(), settings)]


def test_a_schedule_with_a_delay_also_gets_a_runner_that_resumes_delayed_runs(konnect, flow, settings):
    delayed = flow(trigger={"kind": "schedule"})
    delayed["steps"].insert(
        0, {"kind": "delay", "id": "node-2-delay", "name": "Wait", "mode": "for", "amount": 5, "unit": "minutes"}
    )
    k = konnect(trigger={"kind": "schedule", "schedule": "0 * * * *"}, flow=delayed)
    assert [c["kind"] for c in render_children(k, settings)] == ["ConfigMap", "CronJob", "Deployment"]
    plain = konnect(trigger={"kind": "schedule", "schedule": "0 * * * *"})
    assert [c["kind"] for c in render_children(plain, settings)] == ["ConfigMap", "CronJob"]


def test_a_catalogue_polling_konnect_gets_a_runner_with_what_its_poller_needs(konnect, flow, settings):
    """The runner Deployment of an app polling trigger polls the app itself: it gets the broker's URL
    and its konnect's token (never the key), the flow naming app, event and account, and no Ingress."""
    polling = flow(trigger={"kind": "polling", "app": "slack", "event": "new_message", "app_id": 105,
                            "account_id": 12, "items_path": "messages", "dedupe": "id"})  # fmt: skip
    FlowSpec.model_validate(polling)
    configured = settings.model_copy(
        update={
            "credentials_key": "k" * 40,
            "credentials_url": "http://api.konnectz.svc/api/v1/internal/credentials",
            "webhook_ingress_host": "hooks.example.com",
        }
    )
    k = konnect(trigger={"kind": "polling"}, flow=polling)
    children = render_children(k, configured)
    assert [c["kind"] for c in children] == ["Secret", "ConfigMap", "Deployment", "Service"]
    (container,) = children[2]["spec"]["template"]["spec"]["containers"]
    env = {item["name"]: item for item in container["env"]}
    assert env["KONNECTZ_SPEC_FILE"]["value"] == FLOW_FILE
    assert env["KONNECTZ_CREDENTIALS_URL"]["value"] == "http://api.konnectz.svc/api/v1/internal/credentials"
    assert env["KONNECTZ_CREDENTIALS_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "kz-konnect-42"
    assert "KONNECTZ_CREDENTIALS_KEY" not in env and "k" * 40 not in json.dumps(children)
    mounted = json.loads(children[1]["data"]["flow.json"])
    assert mounted["trigger"]["app_id"] == 105 and mounted["trigger"]["account_id"] == 12
