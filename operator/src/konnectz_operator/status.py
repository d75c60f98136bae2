"""Pure builders of the Konnect's status (phase, conditions with metav1.Condition fields)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, Literal

__all__ = ["Phase", "now_rfc3339", "set_condition"]

Phase = Literal["Pending", "Ready", "Paused", "Failed"]
ConditionStatus = Literal["True", "False", "Unknown"]


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def set_condition(
    conditions: Sequence[Mapping[str, Any]] | None,
    *,
    type_: str,
    status: ConditionStatus,
    reason: str,
    message: str,
    generation: int | None,
    now: str,
) -> list[dict[str, Any]]:
    """The condition list with ``type_`` set; lastTransitionTime moves only when the status changes."""
    result: list[dict[str, Any]] = []
    previous: Mapping[str, Any] | None = None
    for cond in conditions or ():
        if cond.get("type") == type_:
            previous = cond
        else:
            result.append(dict(cond))
    since = now
    if previous is not None and previous.get("status") == status:
        since = str(previous.get("lastTransitionTime") or now)
    new: dict[str, Any] = {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message[:32768],
        "lastTransitionTime": since,
    }
    if generation is not None:
        new["observedGeneration"] = generation
    result.append(new)
    return sorted(result, key=lambda cond: str(cond.get("type")))
