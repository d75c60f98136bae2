"""Starting the runs of schedule konnects: once per fire, from the local runner or a CronJob tick.

:func:`fire_due` is the one code path. It asks :func:`~konnectz_contracts.triggers.schedule.due_fire`
which fire a tick at ``now`` stands for (the latest fire within ``grace`` before ``now`` and after
the last fire started), stores its RunRequest in ``KZ_RUNS`` and records the fire in the
``KZ_SCHEDULES`` bucket (key ``konnect.<konnect_id>``). A fire is run once however often it is
ticked:

- its run id is derived from the konnect and the fire time (:func:`fire_run_id`), so two ticks
  for the same fire publish the same ``Nats-Msg-Id`` and JetStream stores one (the api also
  dedupes task logs on ``run_id``);
- later ticks start after the recorded fire.

Fires missed for longer than ``grace`` (the runner was down) are skipped; fires missed within it
coalesce into the latest one.

Callers:

- local mode (``make dev``): :class:`LocalScheduler`, a loop in the ``serve`` process that wakes
  each second and ticks a schedule konnect when its next fire is due. Its first pass (the runner
  starting) catches up a fire missed within ``grace``; a schedule that appears later (published,
  or changed, while the runner runs) first fires at the first fire *after* it appeared, the "Next
  run" its test showed: a schedule published at 10:23:51 to run every 5 minutes from 10:23 first
  runs at 10:28, not at once for 10:23;
- Kubernetes: the operator's CronJob runs ``konnectz-runner tick --spec-file F``. Its cron line
  (:func:`~konnectz_contracts.triggers.schedule.cron_lines`, written into the Konnect by
  :func:`~konnectz_contracts.resource.konnect_resource`) ticks at least at every fire; a tick that is
  not a fire (every 7 minutes ticks every minute) starts nothing. That is how intervals a cron line
  cannot express are exact.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError

from konnectz_contracts.events import KV_SCHEDULES, RunRequest, konnect_key
from konnectz_contracts.model import utcnow
from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.triggers.schedule import ScheduleTrigger, due_fire, fire_run_id, next_fire, trigger_output
from konnectz_runner.bus import KonnectRegistry, publish_run
from konnectz_runner.clock.ticking import Ticking, TriggerKey, keyed_triggers

__all__ = ["GRACE", "LocalScheduler", "fire_due", "last_fire"]

log = logging.getLogger(__name__)

# How late a fire may still start (the CronJob's startingDeadlineSeconds is the same 300 s).
GRACE = timedelta(seconds=300)


async def last_fire(js: JetStreamContext, konnect_id: int) -> datetime | None:
    """The last fire started for the konnect (from ``KZ_SCHEDULES``), or None."""
    kv = await js.key_value(KV_SCHEDULES)
    try:
        entry = await kv.get(konnect_key(konnect_id))
    except KeyNotFoundError:
        return None
    if not entry.value:
        return None
    try:
        return datetime.fromisoformat(json.loads(entry.value)["fire"])
    except (ValueError, KeyError, TypeError):
        log.warning("Ignoring a bad %s entry for konnect %s", KV_SCHEDULES, konnect_id)
        return None


async def fire_due(
    js: JetStreamContext, spec: FlowSpec, now: datetime, *, grace: timedelta = GRACE
) -> RunRequest | None:
    """Store the run of the fire due at ``now`` (if any) and record it; returns the run or None."""
    trigger = spec.trigger
    if not isinstance(trigger, ScheduleTrigger):
        raise ValueError(f"konnect {spec.konnect_id} has no schedule trigger")
    fire = due_fire(trigger, now, grace=grace, last_fire=await last_fire(js, spec.konnect_id))
    if fire is None:
        return None
    run = RunRequest(
        run_id=fire_run_id(spec.konnect_id, fire),
        konnect_id=spec.konnect_id,
        trigger_output=trigger_output(trigger, fire),
        received_at=now,
        source="schedule",
        scheduled_for=fire,
    )
    await publish_run(js, run)  # before recording: a crash in between re-publishes the same run id
    kv = await js.key_value(KV_SCHEDULES)
    await kv.put(konnect_key(spec.konnect_id), json.dumps({"fire": fire.isoformat(), "run_id": run.run_id}).encode())
    log.info("Schedule of konnect %s fired for %s: run %s", spec.konnect_id, fire.isoformat(), run.run_id)
    return run


class LocalScheduler(Ticking):
    """Ticks the schedule konnects of a registry when their next fire is due (local mode)."""

    task_name = "konnectz-scheduler"
    failure = "Scheduling failed"

    def __init__(
        self,
        js: JetStreamContext,
        registry: KonnectRegistry,
        *,
        interval: float = 1.0,
        grace: timedelta = GRACE,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.js = js
        self.registry = registry
        self.interval = interval
        self.grace = grace
        self.clock = clock
        # Each schedule's next tick (keyed_triggers: a changed schedule is a new key).
        self._next: dict[TriggerKey, datetime | None] = {}
        # After the first pass, a schedule seen for the first time was published (or changed) just
        # now: its fires before that are not caught up.
        self._passed = False

    def period(self) -> float:
        return float(self.interval)

    async def tick(self) -> list[RunRequest]:
        """One pass: start every due fire; returns the runs started."""
        now = self.clock()
        started: list[RunRequest] = []
        for spec, trigger, key in keyed_triggers(self.registry.specs(), ScheduleTrigger, self._next):
            if key in self._next:
                due = self._next[key]
                if due is None or now < due:
                    continue
            elif self._passed:  # published or changed while running: the first fire after now
                self._next[key] = next_fire(trigger, now)
                continue
            # New at start (catch up a fire missed within the grace) or due now.
            run = await fire_due(self.js, spec, now, grace=self.grace)
            if run is not None:
                started.append(run)
            self._next[key] = next_fire(trigger, now)
        self._passed = True
        return started
