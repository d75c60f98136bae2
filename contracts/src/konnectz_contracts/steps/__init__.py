"""Step kinds: one module per kind, found by discovery (no list to keep).

A kind's module ``steps/<kind>.py`` defines:

- ``KIND``: its name (the ``kind`` discriminator of its config),
- ``ORDER``: its place in the :data:`Step` union (the order of the generated CRD's and OpenAPI
  document's ``oneOf``; kinds without one come last, by module name),
- ``Config``: its pydantic config model (a :class:`~konnectz_contracts.model.StepBase` with
  ``kind: Literal[KIND]``), which is what a :class:`~konnectz_contracts.spec.FlowSpec` step holds,
- the canvas-side shape of its node's own configuration, if it has one (the coupon's
  ``inHouseAppConfig.coupon``, :mod:`konnectz_contracts.canvas` uses it),
- ``PROVIDERS`` and ``compile_node(node) -> Config``: the editor's nodes (``app_detail.provider``)
  it compiles, with the helpers of :mod:`konnectz_contracts.compiling` (pure: no I/O).

The kind's ``async def run(config, ctx) -> Outcome`` is the runner's: ``konnectz_runner/engine/steps/<kind>.py``
(found by discovery too). Catalogue apps (``app_event``) are compiled by the api, which has the
catalogue (:mod:`konnectz_api.compile.compilers`).

To add a kind: write ``steps/<kind>.py`` here, its ``run`` in ``konnectz_runner/engine/steps/<kind>.py``
and a test; give the editor its node in ``web/src/editor/nodes/<kind>/``.
"""

from __future__ import annotations

import importlib
import operator
import pkgutil
from collections.abc import Callable
from functools import reduce
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

from pydantic import Field

__all__ = ["COMPILERS", "KINDS", "MODULES", "Step", "discover"]


def discover(package: str, path: Any) -> tuple[ModuleType, ...]:
    """The public modules of ``package`` (its ``__path__`` is ``path``), by ``ORDER`` then name."""
    found = [
        importlib.import_module(f"{package}.{info.name}")
        for info in pkgutil.iter_modules(path)
        if not info.name.startswith("_")
    ]
    return tuple(sorted(found, key=lambda m: (getattr(m, "ORDER", 1_000_000), m.__name__)))


#: Every kind's module, in the union's order.
MODULES: tuple[ModuleType, ...] = discover(__name__, __path__)
#: kind -> its module.
KINDS: dict[str, ModuleType] = {}
#: ``app_detail.provider`` -> the ``compile_node`` of the kind that compiles it.
COMPILERS: dict[str, Callable[[Any], Any]] = {}
for _module in MODULES:
    if _module.KIND in KINDS:
        raise RuntimeError(f"two step modules define the kind {_module.KIND!r}")
    KINDS[_module.KIND] = _module
    for _provider in getattr(_module, "PROVIDERS", ()):
        if _provider in COMPILERS:
            raise RuntimeError(f"two step kinds compile the provider {_provider!r}")
        COMPILERS[_provider] = _module.compile_node

# The union of every kind's Config, discriminated by ``kind`` (built from the discovered modules;
# for mypy a step is ``Any``: code narrows it by ``kind`` or ``isinstance``).
if TYPE_CHECKING:
    Step: TypeAlias = Annotated[Any, Field(discriminator="kind")]
else:
    Step = Annotated[reduce(operator.or_, (m.Config for m in MODULES)), Field(discriminator="kind")]
