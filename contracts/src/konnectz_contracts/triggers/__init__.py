"""Trigger kinds: one module per kind, each defining its pydantic model with ``kind: Literal[...]``.

- :mod:`~konnectz_contracts.triggers.webhook`: ``/hooks/<token>`` receives a request.
- :mod:`~konnectz_contracts.triggers.schedule`: the five schedule kinds of the editor, in a time zone.
- :mod:`~konnectz_contracts.triggers.form`: the hosted form ``/forms/<token>`` is submitted.
- :mod:`~konnectz_contracts.triggers.polling`: an app's new items, found by polling with a cursor.

Each module names its model (``MODEL``) and its place (``ORDER``); the :data:`Trigger` union of
the discovered models is what a :class:`~konnectz_contracts.spec.FlowSpec` holds. A module that
compiles editor nodes defines ``PROVIDERS`` and ``compile_trigger(node, TriggerInput)``;
:data:`COMPILERS` (provider -> compile_trigger) is found by discovery. Catalogue-app triggers
(polling, app webhooks, script triggers) need the catalogue and are compiled by the api
(:mod:`konnectz_api.compile.compilers`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import reduce
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

from pydantic import Field

from konnectz_contracts.compiling import TriggerInput
from konnectz_contracts.steps import discover
from konnectz_contracts.triggers.form import FormTrigger
from konnectz_contracts.triggers.polling import PollingTrigger
from konnectz_contracts.triggers.schedule import ScheduleTrigger
from konnectz_contracts.triggers.webhook import WebhookTrigger

__all__ = ["COMPILERS", "MODULES", "FormTrigger", "PollingTrigger", "ScheduleTrigger", "Trigger", "WebhookTrigger"]

#: Every trigger module, by ``ORDER`` (the union's and the CRD's order).
MODULES = discover(__name__, __path__)

# The union of every module's ``MODEL``, discriminated by ``kind`` (found by discovery, as steps; for
# mypy a trigger is ``Any``: code narrows it by ``kind`` or ``isinstance``).
if TYPE_CHECKING:
    Trigger: TypeAlias = Annotated[Any, Field(discriminator="kind")]
else:
    Trigger = Annotated[reduce(operator.or_, (m.MODEL for m in MODULES)), Field(discriminator="kind")]
#: ``app_detail.provider`` -> the ``compile_trigger`` of the trigger module that compiles it.
COMPILERS: dict[str, Callable[[Any, TriggerInput], Any]] = {}
for _module in MODULES:
    for _provider in getattr(_module, "PROVIDERS", ()):
        if _provider in COMPILERS:
            raise RuntimeError(f"two trigger modules compile the provider {_provider!r}")
        COMPILERS[_provider] = _module.compile_trigger
