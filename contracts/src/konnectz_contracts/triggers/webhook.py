"""Webhook trigger: a run starts when ``/hooks/<token>`` receives a request.

A catalogue app's webhook trigger (manifest ``trigger: {type: webhook}``) is this trigger with the
app's ``signature``: the api subscribed the URL at the app when the konnect was published and keeps
the signing secret (encrypted, like credentials); the runner fetches it from the api's broker with
the konnect-scoped token and refuses a delivery whose signature does not match with 401
(:mod:`konnectz_runner.ingress.signatures`).

From the canvas (``compile_trigger``, providers in ``PROVIDERS``):
WebhookInner trigger (provider ``webhook``) → the runner's ``webhook`` trigger; the card's
``selectedAddonsValue.respond`` (``at_once``, ``when_done``, ``step``) and ``respond_timeout_seconds``
say when the caller is answered (:mod:`konnectz_contracts.responses`, docs/webhook-response.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from konnectz_contracts.compiling import TriggerInput, config_values, fail
from konnectz_contracts.manifest import Signature
from konnectz_contracts.model import Strict
from konnectz_contracts.responses import DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS, Respond

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
    respond: Respond = Field(
        default="at_once",
        description="When the caller is answered: at once (the run id), when the run ends, or by a Respond step",
    )
    respond_timeout_seconds: int = Field(
        default=DEFAULT_TIMEOUT_SECONDS,
        ge=1,
        le=MAX_TIMEOUT_SECONDS,
        description="How long the request is held for the run's answer (then 202 with the run id)",
    )

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A plain webhook serializes as before the app fields existed (flow specs stay stable)."""
        data = handler(self)
        if isinstance(data, dict):
            for key in ("app", "event", "signature"):
                if key in data and not data[key]:
                    del data[key]
            if data.get("respond") == "at_once":  # the answer of before: stable specs
                data.pop("respond", None)
                if data.get("respond_timeout_seconds") == DEFAULT_TIMEOUT_SECONDS:
                    del data["respond_timeout_seconds"]
        return data


PROVIDERS = ("webhook",)


RESPOND_CHOICES = ("at_once", "when_done", "step")


def compile_trigger(node: Node, given: TriggerInput) -> WebhookTrigger:
    values = config_values(node)
    respond = values.get("respond") or "at_once"
    if respond not in RESPOND_CHOICES:
        raise fail(node, "Respond: choose at once, when the run ends, or using a Respond step")
    timeout = values.get("respond_timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
    try:
        seconds = int(str(timeout).strip())
    except ValueError:
        raise fail(node, "Respond timeout: a whole number of seconds") from None
    if not 1 <= seconds <= MAX_TIMEOUT_SECONDS:
        raise fail(node, f"Respond timeout: between 1 and {MAX_TIMEOUT_SECONDS} seconds")
    return WebhookTrigger(token=given.webhook_token, respond=respond, respond_timeout_seconds=seconds)


#: This kind's model in the :data:`~konnectz_contracts.triggers.Trigger` union, at place ``ORDER``.
MODEL = WebhookTrigger
ORDER = 1
