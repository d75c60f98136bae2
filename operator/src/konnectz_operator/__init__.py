"""Konnectz operator: reconciles Konnect resources into runner workloads (Kopf)."""

from .config import OperatorSettings
from .errors import InvalidKonnect, OperatorError, UnsupportedKonnect
from .render import (
    render_children,
    render_configmap,
    render_cronjob,
    render_deployment,
    render_ingress,
    render_service,
    webhook_url,
)

__all__ = [
    "InvalidKonnect",
    "OperatorError",
    "OperatorSettings",
    "UnsupportedKonnect",
    "render_children",
    "render_configmap",
    "render_cronjob",
    "render_deployment",
    "render_ingress",
    "render_service",
    "webhook_url",
]
