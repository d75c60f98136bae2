"""Pure checks of a live child against its render: has someone changed what we manage?

A child has drifted when a field the render sets has another value live (the API server's
defaults and fields others add are not drift). Lists are compared item by item in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MANAGED_SECTIONS", "drifted", "owner_konnect"]

# The parts of a child the operator renders and repairs.
MANAGED_SECTIONS = ("spec", "data")


def _covers(live: Any, rendered: Any) -> bool:
    """True when every field of ``rendered`` has the same value in ``live``."""
    if isinstance(rendered, Mapping):
        if not isinstance(live, Mapping):
            return False
        return all(key in live and _covers(live[key], value) for key, value in rendered.items())
    if isinstance(rendered, list):
        if not isinstance(live, list) or len(live) != len(rendered):
            return False
        return all(_covers(a, b) for a, b in zip(live, rendered, strict=True))
    if isinstance(rendered, int | float) and isinstance(live, str):
        return str(rendered) == live  # e.g. an int port written back as a string
    return bool(live == rendered)


def drifted(rendered: Mapping[str, Any], live: Mapping[str, Any] | None) -> bool:
    """True when ``live`` is missing or differs from ``rendered`` in a managed field or label."""
    if live is None:
        return True
    labels = (rendered.get("metadata") or {}).get("labels") or {}
    if not _covers((live.get("metadata") or {}).get("labels") or {}, labels):
        return True
    return any(
        section in rendered and not _covers(live.get(section), rendered[section]) for section in MANAGED_SECTIONS
    )


def owner_konnect(child: Mapping[str, Any]) -> str | None:
    """Name of the Konnect that owns ``child`` (a controller owner reference), if any."""
    for ref in (child.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") == "Konnect" and str(ref.get("apiVersion", "")).startswith("konnectz.io/"):
            return str(ref.get("name"))
    return None
