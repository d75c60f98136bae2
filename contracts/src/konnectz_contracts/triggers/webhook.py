"""Webhook trigger: a run starts when ``/hooks/<token>`` receives a request.

A catalogue app's webhook trigger (manifest ``trigger: {type: webhook}``) is this trigger with the
app's ``signature``: the api subscribed the URL at the app when the konnect was published and keeps
the signing secret (encrypted, like credentials); the runner fetches it from the api's broker with
the konnect-scoped token and refuses a delivery whose signature does not match with 401
(:mod:`konnectz_runner.ingress.signatures`).

From the canvas (``compile_trigger``, providers in ``PROVIDERS``):
WebhookInner trigger (provider ``webhook``) → the runner's ``webhook`` trigger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from konnectz_contracts.compiling import TriggerInput
from konnectz_contracts.manifest import Signature
from konnectz_contracts.model import Strict

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["PROVIDERS", "WebhookTrigger", "compile_trigger"]


class WebhookTrigger(Strict):
    """A run starts when ``/hooks/<token>`` receives a request; the token is matched in full."""

    kind: Literal["webhook"] = "webhook"
    token: str = Field(min_length=20)
    app: str = Field(default="", max_length=100, description="Catalogue app key of an app webhook trigger")
    event: str = Field(default="", max_length=100, description="Catalogue trigger event key")
    signature: Signature | None = Field(
        default=None, description="Deliveries must carry this signature (the secret comes from the api's broker)"
    )

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A plain webhook serializes as before the app fields existed (flow specs stay stable)."""
        data = handler(self)
        if isinstance(data, dict):
            for key in ("app", "event", "signature"):
                if key in data and not data[key]:
                    del data[key]
        return data


PROVIDERS = ("webhook",)


def compile_trigger(node: Node, given: TriggerInput) -> WebhookTrigger:
    return WebhookTrigger(token=given.webhook_token)


#: This kind's model in the :data:`~konnectz_contracts.triggers.Trigger` union, at place ``ORDER``.
MODEL = WebhookTrigger
ORDER = 1
