"""Pure builders of a Konnect's children.

Each ``render_*`` takes the Konnect resource (a mapping as the API server returns it) and the
operator settings and returns a plain dict manifest. They read only the Konnect's name,
namespace and spec (and, for the credential-broker Secret, its uid, which the token is bound to),
never its resourceVersion, labels or status, so the same resource always renders the same
children. Owner references are added when the children are applied (:func:`kopf.adopt` in
:mod:`konnectz_operator.handlers`).

Children of a Konnect ``NAME`` share the name :func:`child_name` (``kz-NAME``):

- webhook trigger: ConfigMap (``flow.json``) + Deployment (``konnectz_runner serve``) + Service,
  and an Ingress for ``/hooks/<token>`` when ``webhook_ingress_host`` is set;
- schedule trigger: ConfigMap + CronJob (``konnectz_runner tick``), and a Deployment when the flow
  has a delay (it resumes delayed runs on time, between ticks);
- with a credentials key configured, also a Secret holding the konnect's credential-broker token
  (the runner's ``KONNECTZ_CREDENTIALS_TOKEN``), bound to the konnect id and the Konnect's
  ``metadata.uid``: a copy of the resource under another name gets a token the api refuses.

The runner image is the operator's (``runner_image``); ``spec.image`` may only name one of the
administrator's allow list (:func:`image_problem`, checked before anything is rendered).

The runner's flow is ``spec.flow`` with the spec's ids (:func:`konnectz_contracts.resource.runner_flow`).
The URL token of a webhook or form is never rendered into a ConfigMap or a pod spec:
the runner gets it from the Secret ``spec.trigger.tokenSecret`` (``KONNECTZ_TRIGGER_TOKEN``, a
``secretKeyRef``); only the Ingress, which routes that exact path, is given the token itself.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from konnectz_contracts.broker_token import ENV_TOKEN, ENV_URL, konnect_token, resource_binding
from konnectz_contracts.events import NATS_REPLICAS_ENV
from konnectz_contracts.resource import BINDING_ANNOTATION, TOKEN_KEY, runner_flow

from .config import OperatorSettings

__all__ = [
    "FLOW_DIR",
    "FLOW_FILE",
    "FLOW_KEY",
    "binding_problem",
    "child_labels",
    "child_name",
    "flow_json",
    "image_problem",
    "pool_flow_json",
    "render_children",
    "render_configmap",
    "render_cronjob",
    "render_deployment",
    "render_ingress",
    "render_secret",
    "render_service",
    "selector_labels",
    "webhook_url",
]

FLOW_KEY = "flow.json"
SECRET_TOKEN_KEY = "credentials-token"  # noqa: S105 - a key name in the Secret
ENV_TRIGGER_TOKEN = "KONNECTZ_TRIGGER_TOKEN"  # noqa: S105 - the name of an environment variable
FLOW_DIR = "/etc/konnectz"
FLOW_FILE = f"{FLOW_DIR}/{FLOW_KEY}"
RUNNER_NAME = "konnectz-runner"
SERVICE_PORT = 80
_CRONJOB_NAME_MAX = 52  # a CronJob's Jobs append 11 characters to its name; Jobs are capped at 63.
_LABEL_VALUE_MAX = 63

Manifest = dict[str, Any]


def _short_hash(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def _bounded(value: str, limit: int) -> str:
    """``value`` when it fits, else a prefix plus a hash of the whole (still unique, still valid)."""
    if len(value) <= limit:
        return value
    prefix = value[: limit - 9].rstrip("-.")
    return f"{prefix}-{_short_hash(value)}"


def _meta(konnect: Mapping[str, Any]) -> tuple[str, str]:
    metadata = konnect.get("metadata") or {}
    return str(metadata["name"]), str(metadata.get("namespace") or "default")


def _spec(konnect: Mapping[str, Any]) -> Mapping[str, Any]:
    return konnect.get("spec") or {}


def child_name(konnect_name: str) -> str:
    """Name of every child: a DNS-1035 label (valid for Services) short enough for a CronJob."""
    return _bounded("kz-" + konnect_name.replace(".", "-"), _CRONJOB_NAME_MAX)


def selector_labels(konnect: Mapping[str, Any]) -> dict[str, str]:
    name, _ = _meta(konnect)
    return {
        "app.kubernetes.io/name": RUNNER_NAME,
        "konnectz.io/konnect": _bounded(name, _LABEL_VALUE_MAX),
    }


def child_labels(konnect: Mapping[str, Any]) -> dict[str, str]:
    labels = selector_labels(konnect)
    labels["app.kubernetes.io/part-of"] = "konnectz"
    labels["app.kubernetes.io/managed-by"] = "konnectz-operator"
    konnect_id = _spec(konnect).get("konnectId")
    if konnect_id is not None:
        labels["konnectz.io/konnect-id"] = str(konnect_id)
    return labels


def flow_json(konnect: Mapping[str, Any], token: str | None = None) -> str:
    """The flow spec as the runner reads it (``spec.flow`` with the spec's ids): canonical JSON (sorted
    keys), so equal flows hash equal. Without ``token`` (the ConfigMap) the trigger has none; the
    runner adds it from its Secret."""
    return json.dumps(runner_flow(_spec(konnect), token), sort_keys=True, ensure_ascii=False, indent=2)


def pool_flow_json(konnect: Mapping[str, Any], token: str | None) -> str:
    """The flow as the shared pool reads it from NATS: :func:`flow_json` with the URL token and the
    Konnect's uid (``resource_uid``), which the pool's runners bind their broker tokens to."""
    flow = runner_flow(_spec(konnect), token)
    flow["resource_uid"] = str((konnect.get("metadata") or {}).get("uid") or "")
    return json.dumps(flow, sort_keys=True, ensure_ascii=False, indent=2)


def _metadata(konnect: Mapping[str, Any], **extra: Any) -> Manifest:
    name, namespace = _meta(konnect)
    return {"name": child_name(name), "namespace": namespace, "labels": child_labels(konnect), **extra}


def _paused(konnect: Mapping[str, Any]) -> bool:
    return bool(_spec(konnect).get("paused", False))


def _image(konnect: Mapping[str, Any], settings: OperatorSettings) -> str:
    return str(_spec(konnect).get("image") or settings.runner_image)


def binding_problem(konnect: Mapping[str, Any], settings: OperatorSettings) -> str | None:
    """Why the Konnect may not run yet (None when it may): with a credentials key, only a Konnect the
    api bound to its flow runs (annotation ``konnectz.io/binding``, an HMAC of ``spec.konnectId`` and
    this resource's uid). A copy naming another flow's ids (readable by anyone who may list Konnects)
    gets no runner, so it never joins that flow's runs or its place in the shared pool."""
    if not settings.credentials_key:
        return None
    metadata = konnect.get("metadata") or {}
    konnect_id = int(_spec(konnect)["konnectId"])
    proof = resource_binding(settings.credentials_key, konnect_id, str(metadata.get("uid") or ""))
    if (metadata.get("annotations") or {}).get(BINDING_ANNOTATION) == proof:
        return None
    return (
        f"waiting for the api to bind this Konnect to flow {konnect_id} (annotation {BINDING_ANNOTATION}): "
        "only the Konnect the api created or imported for a flow runs"
    )


def image_problem(konnect: Mapping[str, Any], settings: OperatorSettings) -> str | None:
    """Why the Konnect's ``spec.image`` may not run (None when it may): the runner image is the
    operator's setting, or one of the allow list ``KONNECTZ_RUNNER_IMAGES``; whoever may write a
    Konnect does not choose what runs with a konnect's credentials."""
    image = _spec(konnect).get("image")
    if not image or image in settings.allowed_runner_images:
        return None
    allowed = ", ".join(sorted(settings.allowed_runner_images))
    return (
        f"image {image} is not allowed: a Konnect runs the operator's runner image or one of the "
        f"administrator's allow list (operator setting KONNECTZ_RUNNER_IMAGES, chart value "
        f"operator.allowedRunnerImages): {allowed}. Leave out spec.image to run the default one"
    )


def _token_secret(konnect: Mapping[str, Any]) -> str | None:
    """The Secret holding the URL token of a webhook or form trigger."""
    trigger = _spec(konnect).get("trigger") or {}
    if trigger.get("kind") not in ("webhook", "form") or not trigger.get("tokenSecret"):
        return None
    return str(trigger["tokenSecret"])


def _token_placeholder(konnect: Mapping[str, Any]) -> str | None:
    """What status shows in place of the token (anyone who may read Konnects reads status)."""
    secret = _token_secret(konnect)
    return f"<secret:{secret}>" if secret else None


def _container(konnect: Mapping[str, Any], settings: OperatorSettings, command: list[str]) -> Manifest:
    name, namespace = _meta(konnect)
    env: list[dict[str, Any]] = [
        {"name": "KONNECTZ_SPEC_FILE", "value": FLOW_FILE},
        {"name": "KONNECTZ_NATS_URL", "value": settings.nats_url},
        {"name": NATS_REPLICAS_ENV, "value": str(settings.nats_replicas)},
        {"name": "KONNECTZ_KONNECT_NAME", "value": name},
        {"name": "KONNECTZ_KONNECT_NAMESPACE", "value": namespace},
    ]
    if settings.nats_runner_user:  # the runner's NATS user; its password only through the Secret
        env.append({"name": "KONNECTZ_NATS_USER", "value": settings.nats_runner_user})
    if settings.nats_runner_secret:
        secret_ref = {"name": settings.nats_runner_secret, "key": "runner-password"}
        env.append({"name": "KONNECTZ_NATS_PASSWORD", "valueFrom": {"secretKeyRef": secret_ref}})
    if settings.credentials_url:
        env.append({"name": ENV_URL, "value": settings.credentials_url})
    if settings.webhook_base_url:  # where its waits' resume URLs point (docs/waits.md)
        env.append({"name": "KONNECTZ_WEBHOOK_BASE_URL", "value": settings.webhook_base_url})
    if settings.credentials_key and _spec(konnect).get("konnectId") is not None:
        secret = {"name": child_name(name), "key": SECRET_TOKEN_KEY}
        env.append({"name": ENV_TOKEN, "valueFrom": {"secretKeyRef": secret}})
    token_secret = _token_secret(konnect)
    if token_secret:
        env.append({"name": ENV_TRIGGER_TOKEN, "valueFrom": {"secretKeyRef": {"name": token_secret, "key": TOKEN_KEY}}})
    reserved = {item["name"] for item in env}
    env += [{"name": key, "value": value} for key, value in sorted(settings.runner_env.items()) if key not in reserved]
    return {
        "name": "runner",
        "image": _image(konnect, settings),
        "imagePullPolicy": settings.runner_image_pull_policy,
        "command": command,
        "env": env,
        "resources": json.loads(json.dumps(settings.runner_resources)),
        "volumeMounts": [
            {"name": "flow", "mountPath": FLOW_DIR, "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},  # noqa: S108 - a private emptyDir, not a shared /tmp
        ],
        "securityContext": {
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def _pod_spec(konnect: Mapping[str, Any], settings: OperatorSettings, container: Manifest) -> Manifest:
    name, _ = _meta(konnect)
    pod: Manifest = {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "containers": [container],
        "volumes": [
            {
                "name": "flow",
                "configMap": {"name": child_name(name), "items": [{"key": FLOW_KEY, "path": FLOW_KEY}]},
            },
            {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
        ],
    }
    if settings.runner_service_account:
        pod["serviceAccountName"] = settings.runner_service_account
    return pod


def _template_annotations(konnect: Mapping[str, Any]) -> dict[str, str]:
    # A changed flow changes the pod template, so the runner restarts with the new spec
    # instead of waiting for the kubelet to refresh the mounted ConfigMap.
    return {"konnectz.io/flow-sha256": hashlib.sha256(flow_json(konnect).encode()).hexdigest()}


def render_configmap(konnect: Mapping[str, Any], settings: OperatorSettings) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _metadata(konnect),
        "data": {FLOW_KEY: flow_json(konnect)},
    }


def render_secret(konnect: Mapping[str, Any], settings: OperatorSettings) -> Manifest:
    """The token that opens this konnect's accounts at the api's credential broker (and no others),
    bound to this resource's uid: the api accepts it only for the Konnect it recorded for the flow."""
    uid = str((konnect.get("metadata") or {}).get("uid") or "")
    token = konnect_token(settings.credentials_key, int(_spec(konnect)["konnectId"]), uid)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _metadata(konnect),
        "type": "Opaque",
        "data": {SECRET_TOKEN_KEY: base64.b64encode(token.encode()).decode()},
    }


def render_deployment(konnect: Mapping[str, Any], settings: OperatorSettings) -> Manifest:
    spec = _spec(konnect)
    replicas = 0 if _paused(konnect) else int(spec.get("replicas", settings.runner_replicas))
    container = _container(
        konnect,
        settings,
        ["python", "-m", "konnectz_runner", "serve", "--host", "0.0.0.0", "--port", str(settings.runner_port)],
    )
    container["ports"] = [{"name": "http", "containerPort": settings.runner_port, "protocol": "TCP"}]
    # /healthz answers 503 while NATS is unreachable: such a runner must not take webhooks (readiness),
    # but restarting it would not bring NATS back, so liveness only checks that it listens.
    container["readinessProbe"] = {
        "httpGet": {"path": "/healthz", "port": "http"},
        "periodSeconds": 5,
        "timeoutSeconds": 3,
        "failureThreshold": 2,
    }
    container["livenessProbe"] = {"tcpSocket": {"port": "http"}, "periodSeconds": 20, "failureThreshold": 3}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(konnect),
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 3,
            "selector": {"matchLabels": selector_labels(konnect)},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
            "template": {
                "metadata": {"labels": child_labels(konnect), "annotations": _template_annotations(konnect)},
                "spec": _pod_spec(konnect, settings, container),
            },
        },
    }


def render_service(konnect: Mapping[str, Any], settings: OperatorSettings) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(konnect),
        "spec": {
            "type": "ClusterIP",
            "selector": selector_labels(konnect),
            "ports": [{"name": "http", "port": SERVICE_PORT, "targetPort": "http", "protocol": "TCP"}],
        },
    }


def render_cronjob(konnect: Mapping[str, Any], settings: OperatorSettings) -> Manifest:
    trigger = _spec(konnect).get("trigger") or {}
    container = _container(konnect, settings, ["python", "-m", "konnectz_runner", "tick", "--spec-file", FLOW_FILE])
    pod = _pod_spec(konnect, settings, container)
    pod["restartPolicy"] = "Never"
    cron_spec: Manifest = {
        "schedule": str(trigger.get("schedule", "")),
        "suspend": _paused(konnect),
        # One tick at a time; a missed tick older than the deadline is skipped, not replayed in bulk.
        # None rather than absent: patching a CronJob whose time zone was removed clears it.
        "timeZone": str(trigger["timezone"]) if trigger.get("timezone") else None,
        "concurrencyPolicy": "Forbid",
        "startingDeadlineSeconds": 300,
        "successfulJobsHistoryLimit": 1,
        "failedJobsHistoryLimit": 3,
        "jobTemplate": {
            "metadata": {"labels": child_labels(konnect)},
            "spec": {
                # A failed tick may have run some steps already: never re-run it automatically.
                "backoffLimit": 0,
                "ttlSecondsAfterFinished": 3600,
                "template": {
                    "metadata": {"labels": child_labels(konnect), "annotations": _template_annotations(konnect)},
                    "spec": pod,
                },
            },
        },
    }
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": _metadata(konnect), "spec": cron_spec}


def render_ingress(konnect: Mapping[str, Any], settings: OperatorSettings, token: str | None = None) -> Manifest:
    """Route ``/hooks/<token>`` (a webhook) or ``/forms/<token>`` (a hosted form), matched exactly, on
    ``webhook_ingress_host`` to the runner Service."""
    token = token or ""
    prefix = "forms" if (_spec(konnect).get("trigger") or {}).get("kind") == "form" else "hooks"
    spec: Manifest = {
        "rules": [
            {
                "host": settings.webhook_ingress_host,
                "http": {
                    "paths": [
                        {
                            "path": f"/{prefix}/{token}",
                            "pathType": "Exact",
                            "backend": {"service": {"name": _service(konnect, settings), "port": {"name": "http"}}},
                        }
                    ]
                },
            }
        ]
    }
    if settings.webhook_ingress_class:
        spec["ingressClassName"] = settings.webhook_ingress_class
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": _metadata(konnect), "spec": spec}


def _has_delay(konnect: Mapping[str, Any]) -> bool:
    steps = (_spec(konnect).get("flow") or {}).get("steps") or []
    return any(isinstance(step, Mapping) and step.get("kind") == "delay" for step in steps)


def _shared(konnect: Mapping[str, Any]) -> bool:
    return _spec(konnect).get("runnerMode") == "shared"


def _service(konnect: Mapping[str, Any], settings: OperatorSettings) -> str:
    """The Service that serves the Konnect's webhook or form: its own, or the shared pool's."""
    return settings.runner_pool_service if _shared(konnect) else child_name(_meta(konnect)[0])


def render_children(konnect: Mapping[str, Any], settings: OperatorSettings, token: str | None = None) -> list[Manifest]:
    """All children the Konnect should have, ConfigMap first (the pods mount it).

    A Konnect of the shared runner pool has no workload of its own (its flow goes to the pool
    through NATS, :mod:`konnectz_operator.pool`): only the Ingress of its webhook or form.
    """
    kind = (_spec(konnect).get("trigger") or {}).get("kind")
    if _shared(konnect):
        if settings.webhook_ingress_host and kind in ("webhook", "form"):
            return [render_ingress(konnect, settings, token)]
        return []
    children = [render_configmap(konnect, settings)]
    if settings.credentials_key and _spec(konnect).get("konnectId") is not None:
        children.insert(0, render_secret(konnect, settings))
    if kind == "schedule":
        children.append(render_cronjob(konnect, settings))
        # A delay parks the run as a timer that fires later; the CronJob's tick only runs what is
        # due when it starts, so a runner Deployment (the same durable consumer) resumes it on time.
        if _has_delay(konnect):
            children.append(render_deployment(konnect, settings))
    else:
        children += [render_deployment(konnect, settings), render_service(konnect, settings)]
        # Webhooks and forms are called from outside; a polling runner only calls out.
        if settings.webhook_ingress_host and kind in ("webhook", "form"):
            children.append(render_ingress(konnect, settings, token))
    return children


def form_url(konnect: Mapping[str, Any], settings: OperatorSettings) -> str | None:
    """Where the hosted form of a form-input Konnect is served (the token shown as the Secret that
    holds it), or None for other triggers."""
    if (_spec(konnect).get("trigger") or {}).get("kind") != "form" or not _token_placeholder(konnect):
        return None
    _, namespace = _meta(konnect)
    base = settings.webhook_base_url or f"http://{_service(konnect, settings)}.{namespace}.svc"
    return f"{base}/forms/{_token_placeholder(konnect)}"


def webhook_url(konnect: Mapping[str, Any], settings: OperatorSettings) -> str | None:
    """Where the webhook of the Konnect is called (the token shown as the Secret that holds it), or
    None for other triggers."""
    if (_spec(konnect).get("trigger") or {}).get("kind") != "webhook":
        return None
    token = _token_placeholder(konnect)
    if token is None:
        return None
    if settings.webhook_base_url:
        return f"{settings.webhook_base_url}/hooks/{token}"
    _, namespace = _meta(konnect)
    return f"http://{_service(konnect, settings)}.{namespace}.svc/hooks/{token}"
