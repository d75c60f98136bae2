"""Node compilers: one module per kind, beside the runner's step module of the same name.

A step module (``compilers/<kind>.py``) defines ``PROVIDERS`` (the ``app_detail.provider`` values it
compiles) and ``compile_node(node) -> <runner step Config>``; a trigger module defines
``PROVIDERS`` and ``compile_trigger(node, TriggerInput) -> <runner Trigger>``. Errors are
:class:`CompileError` naming the node.

To add a kind: write ``compilers/<kind>.py`` and list it in :data:`_STEP_MODULES` or
:data:`_TRIGGER_MODULES`. Known providers that do not run yet are in :data:`PENDING`: the delay
step and the scheduler, form-input and polling (catalogue app) triggers get their modules here
when their runner kinds land (``TriggerInput`` carries the owner's time zone for schedules).
Catalogue apps are compiled by :mod:`~konnectz_api.compilers.app_event` (actions and searches) and
:mod:`~konnectz_api.compilers.app_trigger` (polling triggers), found by the node's app id. A
node's timer (Set Delay, ``data.timerConfigs``) compiles to a delay step *before* the node's own
step: :func:`compile_step` may return a list of steps for one node.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from konnectz_api.compilers import (
    api_call,
    app_event,
    app_trigger,
    coupon,
    data_forwarder,
    delay,
    filter,
    form_input,
    formatter,
    generator,
    iterator,
    scheduler,
    script_trigger,
    splitter,
    webhook,
)
from konnectz_api.compilers._common import CompileError, TriggerInput, config_values, fail

__all__ = [
    "PENDING",
    "STEP_COMPILERS",
    "TRIGGER_COMPILERS",
    "CompileError",
    "TriggerInput",
    "compile_step",
    "compile_trigger",
    "config_values",
]

_STEP_MODULES: tuple[ModuleType, ...] = (
    api_call,
    data_forwarder,
    formatter,
    splitter,
    iterator,
    generator,
    filter,
    coupon,
    delay,
)
_TRIGGER_MODULES: tuple[ModuleType, ...] = (webhook, scheduler, form_input)

STEP_COMPILERS: dict[str, Callable[[Any], Any]] = {p: m.compile_node for m in _STEP_MODULES for p in m.PROVIDERS}
TRIGGER_COMPILERS: dict[str, Callable[[Any, TriggerInput], Any]] = {
    p: m.compile_trigger for m in _TRIGGER_MODULES for p in m.PROVIDERS
}
# Known providers that do not run yet (none today; app events come with the catalogue).
PENDING: dict[str, str] = {}


def compile_step(node: Any) -> Any:
    """The runner step of an action node."""
    compiler = STEP_COMPILERS.get(node.provider)
    if compiler is None and app_event.catalogue_app(node) is not None:
        compiler = app_event.compile_node
    if compiler is None:
        raise fail(node, PENDING.get(node.provider, f"app {node.provider[:50]!r} cannot run yet"))
    step = compiler(node)
    timer = delay.timer_of(node)
    ready = (node.data.model_extra or {}).get("delayReady")
    if node.provider in delay.PROVIDERS or timer is None or timer.get("delay_type") in (None, "") or ready is False:
        return step
    # Set Delay: the node's timer runs before the node's own step.
    return [delay.delay_step(node, timer, step_id=f"{node.id}-delay"), step]


def compile_trigger(node: Any, given: TriggerInput) -> Any:
    """The runner trigger of the trigger node."""
    compiler = TRIGGER_COMPILERS.get(node.provider)
    if compiler is None:
        # A catalogue trigger fed by a script the user installs runs as a webhook on the konnect's URL.
        if (scripted := script_trigger.compile_trigger(node, given)) is not None:
            return scripted
    if compiler is None and app_trigger.is_app_trigger(node):
        compiler = app_trigger.compile_trigger
    if compiler is None:
        message = PENDING.get(node.provider, f"trigger app {node.provider[:50]!r} cannot be published yet")
        raise fail(node, message)
    return compiler(node, given)
