"""The ``Konnect`` custom resource: one source for its spec, status and CRD.

The api's deployer writes Konnects with :func:`konnect_resource`, the operator reads them with
:class:`KonnectSpec` / writes :class:`KonnectStatus`, and ``crds/konnects.konnectz.io.yaml`` (and its
copy in the chart) is generated from these models by ``make gen-crd``
(``python -m konnectz_operator crd``); ``make test`` fails when the file is stale.

``spec.flow`` is the compiled :class:`~konnectz_runner.spec.FlowSpec` itself, typed in the CRD down
to each trigger and step kind, so ``kubectl apply`` of a wrong Konnect is refused with the field named.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from konnectz_runner.spec import FlowSpec
from konnectz_runner.triggers.schedule import ScheduleTrigger, cron_lines

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "OWNER_LABEL",
    "PLURAL",
    "PRINTER_COLUMNS",
    "SHORT_NAMES",
    "SINGULAR",
    "VERSION",
    "Condition",
    "KonnectSpec",
    "KonnectStatus",
    "KonnectTrigger",
    "TriggerKind",
    "konnect_name",
    "konnect_resource",
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


class KonnectSpec(_Resource):
    """Desired state, written by the api on publish."""

    konnectId: int = Field(ge=1, description="Id of the konnect in the api database.")
    ownerId: int = Field(ge=1, description="Id of the user (account) that owns the konnect.")
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
    flow: FlowSpec = Field(description="The compiled flow spec (konnectz_runner.spec.FlowSpec).")
    image: str | None = Field(default=None, min_length=1, description="Override of the runner image for this konnect.")
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
    message: str | None = None
    conditions: list[Condition] | None = Field(
        default=None,
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]},
    )


# `kubectl get konnects`: what runs, for whom, how it starts, whether it works, how its last run
# ended. The status message (why it failed) is in `-o wide` and in the Events of `kubectl describe`.
PRINTER_COLUMNS: tuple[dict[str, Any], ...] = (
    {"name": "Konnect-ID", "type": "integer", "jsonPath": ".spec.konnectId"},
    {"name": "Owner", "type": "integer", "jsonPath": ".spec.ownerId"},
    {"name": "Trigger", "type": "string", "jsonPath": ".spec.trigger.kind"},
    {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
    {"name": "Entrypoint", "type": "string", "jsonPath": ".status.entrypoint"},
    {"name": "Last-Run", "type": "date", "jsonPath": ".status.lastRunTime"},
    {"name": "Outcome", "type": "string", "jsonPath": ".status.lastRunStatus"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    {"name": "Last-Schedule", "type": "date", "jsonPath": ".status.lastScheduleTime", "priority": 1},
    {"name": "Message", "type": "string", "jsonPath": ".status.message", "priority": 1},
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


def konnect_resource(
    flow: FlowSpec, namespace: str, *, runner_mode: Literal["dedicated", "shared"] = "dedicated"
) -> dict[str, Any]:
    """The ``Konnect`` custom resource the api writes for a compiled flow."""
    spec = KonnectSpec(
        konnectId=flow.konnect_id,
        ownerId=flow.owner_id,
        displayName=flow.name,
        runnerMode=runner_mode,
        trigger=_trigger(flow),
        flow=flow,
    )
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": konnect_name(flow.konnect_id),
            "namespace": namespace,
            "labels": {OWNER_LABEL: str(flow.owner_id)},
        },
        # Unset optional fields are left out; the flow is kept whole (the runner reads it back as is).
        "spec": {**spec.model_dump(mode="json", exclude_none=True), "flow": flow.model_dump(mode="json")},
    }
