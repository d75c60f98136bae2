"""Konnectz runner: executes compiled flow specs, serves webhooks, emits task events.

The runner is six rooms, each a folder whose ``__init__.py`` is its face (its ``__all__`` is what
others may import; the room's modules are its own): ``engine`` (a flow run step by step, the
journal, each kind's ``steps/<kind>.py``), ``apps`` (the catalogue, app requests, outbound HTTP
behind the guard, rate budgets), ``bus`` (NATS: streams, buckets, run states, capture, timers,
the registry), ``ingress`` (the HTTP app), ``work`` (the run worker) and ``clock`` (scheduler,
poller, election); at the top ``cli``, ``config``, ``telemetry``, ``outage`` and ``processes``.

The api imports the faces of ``engine``, ``apps`` and ``bus`` and, from this facade, what stands
at the top (never ``ingress``, ``work`` or ``clock``); ``tools/check_imports.py`` holds every
package to those rules. The contracts the runner executes (the flow spec, the step and trigger
configs, the wire models, the errors) are :mod:`konnectz_contracts`.
"""

from konnectz_runner.outage import Outage, nats_callbacks
from konnectz_runner.telemetry import RUNS_FAILED, RUNS_FINISHED, STEP_SECONDS, setup_tracing, tracer

__all__ = ["RUNS_FAILED", "RUNS_FINISHED", "STEP_SECONDS", "Outage", "nats_callbacks", "setup_tracing", "tracer"]
