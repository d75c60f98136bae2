"""Trigger kinds: one module per kind, each defining its pydantic model with ``kind: Literal[...]``.

- :mod:`~konnectz_runner.triggers.webhook`: ``/hooks/<token>`` receives a request.
- :mod:`~konnectz_runner.triggers.schedule`: the five schedule kinds of the editor, in a time zone.
- :mod:`~konnectz_runner.triggers.form`: the hosted form ``/forms/<token>`` is submitted.
- :mod:`~konnectz_runner.triggers.polling`: an app's new items, found by polling with a cursor.

The :data:`Trigger` union is what a :class:`~konnectz_runner.spec.FlowSpec` holds.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from konnectz_runner.triggers.form import FormTrigger
from konnectz_runner.triggers.polling import PollingTrigger
from konnectz_runner.triggers.schedule import ScheduleTrigger
from konnectz_runner.triggers.webhook import WebhookTrigger

__all__ = ["FormTrigger", "PollingTrigger", "ScheduleTrigger", "Trigger", "WebhookTrigger"]

Trigger = Annotated[WebhookTrigger | ScheduleTrigger | FormTrigger | PollingTrigger, Field(discriminator="kind")]
