"""The clock room: what a runner starts by itself, on time.

- :mod:`.scheduler`: the runs of schedule konnects, once per fire (local, or a CronJob's ``tick``);
- :mod:`.poller`: polling konnects, one run per new item, a cursor in ``KZ_POLLS``;
- :mod:`.election`: one holder of a duty among runners (a NATS KV lock); :mod:`.ticking`: a pass
  repeated at a fixed period.

This face is what the ingress and the command line may import (``from konnectz_runner.clock import
...``); the api never imports this room.
"""

from konnectz_runner.clock.election import Election
from konnectz_runner.clock.poller import LocalPoller, read_cursor
from konnectz_runner.clock.scheduler import LocalScheduler, fire_due

__all__ = ["Election", "LocalPoller", "LocalScheduler", "fire_due", "read_cursor"]
