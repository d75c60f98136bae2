"""Trigger kinds: one module per kind, each defining its pydantic model with ``kind: Literal[...]``.

- :mod:`~konnectz_contracts.triggers.webhook`: ``/hooks/<token>`` receives a request.
- :mod:`~konnectz_contracts.triggers.schedule`: the five schedule kinds of the editor, in a time zone.
- :mod:`~konnectz_contracts.triggers.form`: the hosted form ``/forms/<token>`` is submitted.
- :mod:`~konnectz_contracts.triggers.polling`: an app's new items, found by polling with a cursor.

The :data:`Trigger` union is what a :class:`~konnectz_contracts.spec.FlowSpec` holds. A module that
compiles editor nodes defines ``PROVIDERS`` and ``compile_trigger(node, TriggerInput)``;
:data:`COMPILERS` (provider -> compile_trigger) is found by discovery. Catalogue-app triggers
(polling, app webhooks, script triggers) need the catalogue and are compiled by the api
(:mod:`konnectz_api.compilers`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from konnectz_contracts.compiling import TriggerInput
from konnectz_contracts.steps import discover
from konnectz_contracts.triggers.form import FormTrigger
from konnectz_contracts.triggers.polling import PollingTrigger
from konnectz_contracts.triggers.schedule import ScheduleTrigger
from konnectz_contracts.triggers.webhook import WebhookTrigger

__all__ = ["COMPILERS", "MODULES", "FormTrigger", "PollingTrigger", "ScheduleTrigger", "Trigger", "WebhookTrigger"]

Trigger = Annotated[WebhookTrigger | ScheduleTrigger | FormTrigger | PollingTrigger, Field(discriminator="kind")]

#: Every trigger module, by name.
MODULES = discover(__name__, __path__)
#: ``app_detail.provider`` -> the ``compile_trigger`` of the trigger module that compiles it.
COMPILERS: dict[str, Callable[[Any, TriggerInput], Any]] = {}
for _module in MODULES:
    for _provider in getattr(_module, "PROVIDERS", ()):
        if _provider in COMPILERS:
            raise RuntimeError(f"two trigger modules compile the provider {_provider!r}")
        COMPILERS[_provider] = _module.compile_trigger
