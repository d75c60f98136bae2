"""Trigger kinds: one module per kind, each defining its pydantic model with ``kind: Literal[...]``.

- :mod:`~konnectz_contracts.triggers.webhook`: ``/hooks/<token>`` receives a request.
- :mod:`~konnectz_contracts.triggers.schedule`: the five schedule kinds of the editor, in a time zone.
- :mod:`~konnectz_contracts.triggers.form`: the hosted form ``/forms/<token>`` is submitted.
- :mod:`~konnectz_contracts.triggers.polling`: an app's new items, found by polling with a cursor.

The :data:`Trigger` union is what a :class:`~konnectz_contracts.spec.FlowSpec` holds.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from konnectz_contracts.triggers.form import FormTrigger
from konnectz_contracts.triggers.polling import PollingTrigger
from konnectz_contracts.triggers.schedule import ScheduleTrigger
from konnectz_contracts.triggers.webhook import WebhookTrigger

__all__ = ["FormTrigger", "PollingTrigger", "ScheduleTrigger", "Trigger", "WebhookTrigger"]

Trigger = Annotated[WebhookTrigger | ScheduleTrigger | FormTrigger | PollingTrigger, Field(discriminator="kind")]
