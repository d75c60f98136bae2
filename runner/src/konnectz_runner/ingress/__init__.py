"""The ingress room: the runner's HTTP app, where runs come in.

- :mod:`.server`: the Starlette app (``/hooks/<token>``, the hosted form, ``/metrics``, ``/healthz``)
  that also starts the run worker, the scheduler and the poller;
- :mod:`.webhook`: a request read as a trigger output; :mod:`.signatures` and :mod:`.webhook_secrets`:
  app webhooks' signatures and their secrets; :mod:`.idempotency`: the ``Idempotency-Key``;
- :mod:`.backlog`: how many accepted runs may wait.

This face is what the command line may import (``from konnectz_runner.ingress import ...``); the api
never imports this room.
"""

from konnectz_runner.ingress.server import create_app

__all__ = ["create_app"]
