"""Trigger kinds: one module per kind, each defining its pydantic model with ``kind: Literal[...]``.

The :data:`Trigger` union is what a :class:`~konnectz_runner.spec.FlowSpec` holds.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from konnectz_runner.triggers.webhook import WebhookTrigger

__all__ = ["Trigger", "WebhookTrigger"]

# A discriminated union once more kinds join: ``Annotated[A | B, Field(discriminator="kind")]``.
Trigger = Annotated[WebhookTrigger, Field(discriminator="kind")]
