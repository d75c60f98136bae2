"""Webhook trigger: a run starts when ``/hooks/<token>`` receives a request."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from konnectz_runner.model import Strict

__all__ = ["WebhookTrigger"]


class WebhookTrigger(Strict):
    """A run starts when ``/hooks/<token>`` receives a request; the token is matched in full."""

    kind: Literal["webhook"] = "webhook"
    token: str = Field(min_length=20)
