"""WebhookInner trigger (provider ``webhook``) → the runner's ``webhook`` trigger."""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import TriggerInput
from konnectz_contracts.triggers import WebhookTrigger

PROVIDERS = ("webhook",)


def compile_trigger(node: Any, given: TriggerInput) -> WebhookTrigger:
    return WebhookTrigger(token=given.webhook_token)
