"""The operator's errors and how each maps to Kopf's retry policy.

Hierarchy::

    OperatorError
     └── InvalidKonnect          the resource cannot be reconciled as written (fix the spec)
          └── UnsupportedKonnect a valid resource asking for something this operator does not do

Errors of the Kubernetes API arrive as :class:`konnectz_operator.apply.KubeError` and are mapped by
:func:`to_kopf_error`: throttling (429), server errors (5xx), conflicts and vanished objects
are retried later (``kopf.TemporaryError``); a child the API server refuses as invalid (400,
422) will be refused again, so it is permanent until the Konnect changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .apply import KubeError

if TYPE_CHECKING:  # loaded by to_kopf_error only: `python -m konnectz_operator crd` runs without kopf
    import kopf

__all__ = ["InvalidKonnect", "OperatorError", "UnsupportedKonnect", "to_kopf_error"]


class OperatorError(Exception):
    """Base of the operator's own errors."""


class InvalidKonnect(OperatorError):
    """The Konnect's spec cannot be turned into workloads."""


class UnsupportedKonnect(InvalidKonnect):
    """The spec is valid but asks for a feature this operator does not provide."""


def _retry_after(exc: KubeError, default: float) -> float:
    headers = exc.headers or {}
    value = headers.get("Retry-After") if hasattr(headers, "get") else None
    try:
        return max(1.0, float(value)) if value is not None else default
    except ValueError:
        return default


def to_kopf_error(exc: KubeError) -> kopf.TemporaryError | kopf.PermanentError:
    """The Kopf error that states the retry policy for a failed Kubernetes API call."""
    import kopf  # the operator's run loads it; the CRD generator (same package) does not need it

    status = exc.status or 0
    reason = f"Kubernetes API {status} {exc.reason or ''}".strip()
    if status == 429 or status >= 500:
        return kopf.TemporaryError(reason, delay=_retry_after(exc, 10.0 if status == 429 else 15.0))
    if status in (400, 422):
        return kopf.PermanentError(f"{reason}: {exc.body or ''}"[:1000])
    if status in (401, 403):
        # Credentials or RBAC may be fixed without touching the Konnect: keep retrying, slowly.
        return kopf.TemporaryError(reason, delay=60.0)
    # 404 (a child or namespace vanished mid-way), 409 (a concurrent writer) and anything else.
    return kopf.TemporaryError(reason, delay=5.0)
