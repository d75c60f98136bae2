"""The work room: the run worker, a durable JetStream consumer of ``KZ_RUNS``.

- :mod:`.worker`: one run from admission to ack: quota, concurrency slot, journal, the engine's
  ``execute``, the task event published, then the ack;
- :mod:`.quota`: reserving a run's tasks with the api (the wire is :mod:`konnectz_contracts.quota`);
- :mod:`.slots`: a konnect's concurrency limit across runners; :mod:`.failed_runs`: the ERROR event of
  a run that could not execute.

This face is what the ingress and the command line may import (``from konnectz_runner.work import
...``); the api never imports this room.
"""

from konnectz_runner.work.quota import NatsQuotaGate, QuotaBlocks
from konnectz_runner.work.worker import RunWorker, WorkerThread, consumer_for

__all__ = ["NatsQuotaGate", "QuotaBlocks", "RunWorker", "WorkerThread", "consumer_for"]
