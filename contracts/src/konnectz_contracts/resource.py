"""The ``Konnect`` custom resource: one source for its spec, status and CRD.

The api's deployer writes Konnects with :func:`konnect_resource`, the operator reads them with
:class:`KonnectSpec` / writes :class:`KonnectStatus`, and ``crds/konnects.konnectz.io.yaml`` (and its
copy in the chart) is generated from these models by ``make gen-crd``
(``python -m konnectz_operator crd``); ``make test`` fails when the file is stale.

``spec.flow`` is the compiled :class:`~konnectz_contracts.spec.FlowSpec`, typed in the CRD down to each
trigger and step kind, so ``kubectl apply`` of a wrong Konnect is refused with the field named, and
without what is not the flow's to say: the ids (``spec.konnectId`` / ``spec.ownerId``, which the api
sets when it imports a Konnect applied with kubectl) and the URL token of a webhook or form trigger,
which lives in a Secret owned by the Konnect (``spec.trigger.tokenSecret``), never in the spec.
:func:`runner_flow` puts the three back for the runner.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.triggers import FormTrigger, PollingTrigger, ScheduleTrigger, WebhookTrigger
from konnectz_contracts.triggers.schedule import cron_lines

__all__ = [
    "API_VERSION",
    "BINDING_ANNOTATION",
    "GROUP",
    "KIND",
    "KONNECT_ID_LABEL",
    "LAST_RUN_ANNOTATION",
    "LAST_RUN_FIELDS",
    "OWNER_ANNOTATION",
    "OWNER_LABEL",
    "PLURAL",
    "PRINTER_COLUMNS",
    "REFUSED_ANNOTATION",
    "SHORT_NAMES",
    "SINGULAR",
    "TOKEN_KEY",
    "VERSION",
    "Condition",
    "KonnectSpec",
    "KonnectStatus",
    "KonnectTrigger",
    "ResourceFlow",
    "TriggerKind",
    "konnect_name",
    "konnect_resource",
    "last_run_annotation",
    "last_run_status",
    "refused_status",
    "resource_flow",
    "runner_flow",
    "token_secret",
    "token_secret_name",
]

GROUP = "konnectz.io"
VERSION = "v1alpha1"
KIND = "Konnect"
PLURAL = "konnects"
SINGULAR = "konnect"
SHORT_NAMES = ("kz",)
API_VERSION = f"{GROUP}/{VERSION}"
# Label of every Konnect the api writes: the owning account's id (the flow list selects by it).
OWNER_LABEL = "konnectz.io/owner"
# Label of every Konnect with a flow in the api: the flow's id. A Konnect applied with kubectl keeps
# its own name, so the api finds the resource of a flow by this label, not by konnect-<id>.
KONNECT_ID_LABEL = "konnectz.io/konnect-id"
# Annotation naming the owner by e-mail: the api writes it on publish; on a Konnect applied with
# kubectl it says whose flow it is (the api imports it for that user, or refuses it with a message).
OWNER_ANNOTATION = "konnectz.io/owner"
# Annotation the api writes on the Konnect it created or imported for a flow: an HMAC of the flow's
# id and the resource's uid under the credentials key (konnectz_contracts.broker_token.resource_binding).
# With a credentials key, the operator runs only Konnects that carry the right one.
BINDING_ANNOTATION = "konnectz.io/binding"
# Annotation the api writes on a flow's Konnect when a run of it is stored: the run's outcome and
# today's counts as JSON (:func:`last_run_annotation`). The operator is the one writer of the status:
# it copies these fields into it (:func:`last_run_status`); the api writes only spec, labels and
# annotations.
LAST_RUN_ANNOTATION = "konnectz.io/last-run"
#: The status fields the last-run annotation carries (``kubectl get konnects`` shows them).
LAST_RUN_FIELDS: dict[str, type] = {
    "lastRunTime": str,
    "lastRunStatus": str,
    "lastRunId": str,
    "runsDay": str,
    "runsToday": int,
    "failuresToday": int,
}
# Annotation the api writes on a Konnect it does not take (not imported, or naming a flow that is not
# its own): why, in words. The operator shows it in the status (phase Failed, the message:
# :func:`refused_status`); the api removes it when it takes the Konnect.
REFUSED_ANNOTATION = "konnectz.io/refused"
REFUSED_MESSAGE_MAX = 1024
# Key of the URL token in the Secret spec.trigger.tokenSecret names.
TOKEN_KEY = "token"  # noqa: S105 - a key name in the Secret

TriggerKind = Literal["webhook", "schedule", "form", "polling"]
Phase = Literal["Pending", "Ready", "Paused", "Failed"]


class _Resource(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KonnectTrigger(_Resource):
    """How runs start. The trigger's own settings (webhook token, schedule) live in ``flow.trigger``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "self.kind != 'schedule' || has(self.schedule)",
                    "message": "trigger.schedule is required when trigger.kind is schedule",
                }
            ]
        },
    )

    kind: TriggerKind
    schedule: str | None = Field(
        default=None,
        min_length=9,
        max_length=100,
        description="Five-field cron expression (CronJob syntax); required when kind is schedule.",
    )
    timezone: str | None = Field(
        default=None, max_length=64, description="IANA time zone of the schedule, e.g. Europe/Berlin (default UTC)."
    )
    tokenSecret: str | None = Field(
        default=None,
        max_length=253,
        description="Secret (key `token`) holding the URL token of a webhook or form trigger, owned by the "
        "Konnect; the api writes both. The token is never in the spec.",
    )


_NOT_IN_SPEC = Field(default=None, exclude=True)


class _WebhookInSpec(WebhookTrigger):
    token: SkipJsonSchema[str | None] = _NOT_IN_SPEC  # type: ignore[assignment]


class _FormInSpec(FormTrigger):
    token: SkipJsonSchema[str | None] = _NOT_IN_SPEC  # type: ignore[assignment]


class ResourceFlow(FlowSpec):
    """The flow as ``spec.flow`` holds it: a :class:`FlowSpec` without its ids and URL token."""

    konnect_id: SkipJsonSchema[int | None] = _NOT_IN_SPEC  # type: ignore[assignment]
    owner_id: SkipJsonSchema[int | None] = _NOT_IN_SPEC  # type: ignore[assignment]
    trigger: Annotated[_WebhookInSpec | ScheduleTrigger | _FormInSpec | PollingTrigger, Field(discriminator="kind")]


class KonnectSpec(_Resource):
    """Desired state: written by the api on publish, or by anyone with kubectl (the api imports it)."""

    konnectId: int | None = Field(
        default=None, ge=1, description="Id of the konnect in the api database (the api sets it when it imports one)."
    )
    ownerId: int | None = Field(
        default=None, ge=1, description="Id of the user who owns the konnect (the api sets it from the annotation)."
    )
    displayName: str | None = Field(default=None, max_length=255, description="Name shown in the product; free text.")
    paused: bool = Field(
        default=False,
        description="A paused konnect keeps its resources but runs nothing "
        "(Deployment scaled to 0, CronJob suspended).",
    )
    runnerMode: Literal["dedicated", "shared"] = Field(
        default="dedicated",
        description="dedicated runs one runner Deployment (or CronJob) for this konnect; "
        "shared runs it in the shared runner pool (no workload of its own; for accounts with thousands of flows).",
    )
    trigger: KonnectTrigger
    flow: ResourceFlow = Field(
        description="The compiled flow spec (konnectz_contracts.spec.FlowSpec) without its ids and URL token."
    )
    image: str | None = Field(
        default=None,
        min_length=1,
        description="A runner image from the operator's allow list (KONNECTZ_RUNNER_IMAGES, chart value "
        "operator.allowedRunnerImages); any other is refused in the status. Unset: the operator's runner image.",
    )
    replicas: int | None = Field(
        default=None,
        ge=0,
        le=20,
        description="Override of the runner replica count (dedicated mode, webhook triggers).",
        json_schema_extra={"format": "int32"},
    )


class Condition(_Resource):
    """A metav1.Condition."""

    type: str = Field(max_length=316)
    status: Literal["True", "False", "Unknown"]
    observedGeneration: int | None = Field(default=None, ge=0)
    lastTransitionTime: AwareDatetime
    reason: str = Field(min_length=1, max_length=1024)
    message: str = Field(max_length=32768)


class KonnectStatus(BaseModel):
    """Observed state, written only by the operator (status subresource)."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"x-kubernetes-preserve-unknown-fields": True})

    phase: Phase | None = None
    observedGeneration: int | None = None
    webhookUrl: str | None = None
    entrypoint: str | None = Field(
        default=None, description="How runs start: the webhook URL, or the cron line and time zone of a schedule."
    )
    runnerMode: Literal["dedicated", "shared"] | None = Field(
        default=None, description="Where the operator last placed the konnect (a flow leaving the pool is withdrawn)."
    )
    lastScheduleTime: AwareDatetime | None = None
    lastRunTime: AwareDatetime | None = Field(default=None, description="When the latest run finished (from the api).")
    lastRunStatus: Literal["SUCCESS", "ERROR"] | None = None
    lastRunId: str | None = None
    runsDay: str | None = Field(default=None, description="The UTC day runsToday and failuresToday count (YYYY-MM-DD).")
    runsToday: int | None = Field(default=None, ge=0, description="Runs finished on runsDay (from the api).")
    failuresToday: int | None = Field(default=None, ge=0, description="Of those, the runs that ended in ERROR.")
    message: str | None = None
    conditions: list[Condition] | None = Field(
        default=None,
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]},
    )
    # revisions
    revision: int | None = Field(
        default=None, ge=1, description="The revision of the flow the runners serve (spec.flow.revision)."
    )


# `kubectl get konnects`: what runs, for whom, how it starts, whether it works, how its last run
# ended. The status message (why it failed) is in `-o wide` and in the Events of `kubectl describe`.
PRINTER_COLUMNS: tuple[dict[str, Any], ...] = (
    {"name": "Konnect-ID", "type": "integer", "jsonPath": ".spec.konnectId"},
    {"name": "Owner", "type": "string", "jsonPath": ".metadata.annotations.konnectz\\.io/owner"},
    {"name": "Trigger", "type": "string", "jsonPath": ".spec.trigger.kind"},
    {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
    {"name": "Entrypoint", "type": "string", "jsonPath": ".status.entrypoint"},
    {"name": "Last-Run", "type": "date", "jsonPath": ".status.lastRunTime"},
    {"name": "Outcome", "type": "string", "jsonPath": ".status.lastRunStatus"},
    {"name": "Runs-Today", "type": "integer", "jsonPath": ".status.runsToday"},
    {"name": "Failures-Today", "type": "integer", "jsonPath": ".status.failuresToday"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    {"name": "Last-Schedule", "type": "date", "jsonPath": ".status.lastScheduleTime", "priority": 1},
    {"name": "Message", "type": "string", "jsonPath": ".status.message", "priority": 1},
    {"name": "Revision", "type": "integer", "jsonPath": ".status.revision", "priority": 1},
)


def konnect_name(konnect_id: int) -> str:
    return f"konnect-{int(konnect_id)}"


def _trigger(flow: FlowSpec) -> KonnectTrigger:
    """The resource's trigger: for a schedule, the cron line its CronJob ticks on (``tick`` decides
    whether a tick is a fire, so a line that ticks more often than the schedule is exact)."""
    if isinstance(flow.trigger, ScheduleTrigger):
        [line] = cron_lines(flow.trigger)
        return KonnectTrigger(kind="schedule", schedule=line.schedule, timezone=line.time_zone)
    return KonnectTrigger(kind=flow.trigger.kind)


def token_secret_name(name: str) -> str:
    """The Secret holding the URL token of the Konnect ``name`` (written by the api)."""
    return f"{name}-trigger"


def resource_flow(flow: FlowSpec) -> dict[str, Any]:
    """``spec.flow`` of a compiled flow: everything but the ids and the URL token."""
    data = flow.model_dump(mode="json")
    data.pop("konnect_id", None)
    data.pop("owner_id", None)
    data["trigger"].pop("token", None)
    if data.get("revision") is None:  # revisions: a flow published without one keeps the resource it had
        data.pop("revision", None)
    if flow.run_control is None:  # run control: a flow without run settings keeps the resource it had
        data.pop("run_control", None)
    else:  # the CRD has no nulls: a setting left out is absent
        data["run_control"] = flow.run_control.model_dump(mode="json", exclude_none=True)
    return data


def runner_flow(spec: Mapping[str, Any], token: str | None) -> dict[str, Any]:
    """The flow a runner executes (a :class:`FlowSpec` as a dict): ``spec.flow`` with the ids of the
    spec and the URL token from the Secret put back."""
    flow = dict(spec.get("flow") or {})
    flow["konnect_id"] = spec.get("konnectId")
    flow["owner_id"] = spec.get("ownerId")
    trigger = dict(flow.get("trigger") or {})
    if token is not None and trigger.get("kind") in ("webhook", "form"):
        trigger["token"] = token
    flow["trigger"] = trigger
    return flow


def konnect_resource(
    flow: FlowSpec,
    namespace: str,
    *,
    runner_mode: Literal["dedicated", "shared"] = "dedicated",
    owner_email: str | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """The ``Konnect`` custom resource the api writes for a compiled flow (its token goes to
    :func:`token_secret`); ``name`` is the resource's (``konnect-<id>`` unless it was applied with
    kubectl under a name of its own)."""
    name = name or konnect_name(flow.konnect_id)
    trigger = _trigger(flow)
    if getattr(flow.trigger, "token", None):
        trigger.tokenSecret = token_secret_name(name)
    spec = KonnectSpec(
        konnectId=flow.konnect_id,
        ownerId=flow.owner_id,
        displayName=flow.name,
        runnerMode=runner_mode,
        trigger=trigger,
        flow=ResourceFlow.model_validate(resource_flow(flow)),
    )
    labels = {OWNER_LABEL: str(flow.owner_id), KONNECT_ID_LABEL: str(flow.konnect_id)}
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if owner_email:
        metadata["annotations"] = {OWNER_ANNOTATION: owner_email}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata,
        # Unset optional fields are left out; the flow is kept whole (the runner reads it back as is).
        "spec": {**spec.model_dump(mode="json", exclude_none=True), "flow": resource_flow(flow)},
    }


def token_secret(name: str, namespace: str, token: str, *, owner_uid: str | None = None) -> dict[str, Any]:
    """The Secret of a Konnect's URL token; owned by the Konnect (so it goes with it) when its uid is known."""
    metadata: dict[str, Any] = {
        "name": token_secret_name(name),
        "namespace": namespace,
        "labels": {"app.kubernetes.io/part-of": "konnectz", "konnectz.io/konnect": name},
    }
    if owner_uid:
        metadata["ownerReferences"] = [
            {"apiVersion": API_VERSION, "kind": KIND, "name": name, "uid": owner_uid, "controller": False}
        ]
    data = {TOKEN_KEY: base64.b64encode(token.encode()).decode()}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": metadata, "type": "Opaque", "data": data}


def last_run_annotation(fields: Mapping[str, Any]) -> str:
    """The value of :data:`LAST_RUN_ANNOTATION` for these status fields (compact JSON, sorted keys)."""
    return json.dumps({k: v for k, v in fields.items() if k in LAST_RUN_FIELDS}, separators=(",", ":"), sort_keys=True)


def last_run_status(annotations: Mapping[str, Any] | None) -> dict[str, Any]:
    """The status fields of a Konnect's :data:`LAST_RUN_ANNOTATION`: only the known ones, of their type
    (the annotation can be edited with kubectl: anything else is left out, never an error)."""
    raw = (annotations or {}).get(LAST_RUN_ANNOTATION)
    try:
        value = json.loads(raw) if isinstance(raw, str) and len(raw) <= 4096 else None
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {
        key: value[key]
        for key, kind in LAST_RUN_FIELDS.items()
        if isinstance(value.get(key), kind) and not isinstance(value.get(key), bool)
    }


def refused_status(annotations: Mapping[str, Any] | None) -> dict[str, Any]:
    """The status a Konnect the api refused shows (its :data:`REFUSED_ANNOTATION`): phase Failed and
    the api's reason; empty when the api has not refused it."""
    message = (annotations or {}).get(REFUSED_ANNOTATION)
    if not isinstance(message, str) or not message.strip():
        return {}
    return {"phase": "Failed", "message": message[:REFUSED_MESSAGE_MAX]}
