"""Checks a Konnect's spec beyond what the CRD schema can express.

The API server already enforces the structural schema (types, enums, ``konnectId >= 1``,
``trigger.kind`` required, a cron for schedule triggers). This module checks what only the
operator knows: the ``flow`` is a valid :class:`konnectz_contracts.spec.FlowSpec` and agrees
with the rest of the spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from pydantic import ValidationError

from konnectz_contracts.resource import TriggerKind, runner_flow
from konnectz_contracts.spec import FlowSpec

from .errors import InvalidKonnect, UnsupportedKonnect

__all__ = ["validate_konnect"]

TRIGGER_KINDS: tuple[str, ...] = get_args(TriggerKind)


def _errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    return "; ".join(parts)


def validate_konnect(konnect: Mapping[str, Any], token: str | None = None) -> FlowSpec:
    """Return the flow a Konnect runs (``spec.flow`` with the spec's ids and the URL ``token``), or raise
    :class:`InvalidKonnect` saying what is wrong."""
    spec = konnect.get("spec") or {}
    if spec.get("runnerMode", "dedicated") not in ("dedicated", "shared"):
        raise UnsupportedKonnect(f"runnerMode {spec.get('runnerMode')!r} is not supported; use dedicated or shared")
    trigger = spec.get("trigger") or {}
    kind = trigger.get("kind")
    if kind not in TRIGGER_KINDS:
        raise InvalidKonnect(f"spec.trigger.kind must be one of {', '.join(TRIGGER_KINDS)}, not {kind!r}")
    if kind == "schedule" and not trigger.get("schedule"):
        raise InvalidKonnect("spec.trigger.schedule (a cron expression) is required for a schedule trigger")
    flow = spec.get("flow")
    if not isinstance(flow, Mapping):
        raise InvalidKonnect("spec.flow must be an object (the compiled flow spec)")
    flow_trigger = flow.get("trigger")
    flow_kind = flow_trigger.get("kind") if isinstance(flow_trigger, Mapping) else None
    if flow_kind is not None and flow_kind != kind:  # before the flow's own checks: the token follows the kind
        raise InvalidKonnect(f"spec.flow.trigger.kind ({flow_kind}) differs from spec.trigger.kind ({kind})")
    try:
        parsed = FlowSpec.model_validate(runner_flow(spec, token))
    except ValidationError as exc:
        raise InvalidKonnect(f"spec.flow is not a valid flow spec: {_errors(exc)}") from exc
    if parsed.trigger.kind != kind:
        raise InvalidKonnect(f"spec.flow.trigger.kind ({parsed.trigger.kind}) differs from spec.trigger.kind ({kind})")
    return parsed
