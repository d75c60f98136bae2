"""From the editor's canvas to the flow spec and back; pure (no session, no network, no crud).

- :mod:`~konnectz_api.compile.plan`: the canvas in run order (the paths, the trigger, the app names);
- :mod:`~konnectz_api.compile.flow`: the whole flow compiled and validated into a ``FlowSpec``;
- :mod:`~konnectz_api.compile.compilers`: the dispatch to each kind's ``compile_node`` (in
  ``konnectz_contracts``) and the catalogue apps' compilers;
- :mod:`~konnectz_api.compile.decompile`: a flow spec back into a canvas (a Konnect made with kubectl);
- the trigger helpers: :mod:`~konnectz_api.compile.live_trigger` (the live trigger's kind and
  schedule, for the lists) and :mod:`~konnectz_api.compile.trigger_filter` (Test & Review's sample).

``plan``, ``live_trigger`` and ``trigger_filter`` are below the models (``models`` and ``schemas``
use them); ``flow``, ``compilers`` and ``decompile`` are beside ``crud``. This module imports none
of them, so importing one runs only what it needs.
"""
