"""The back-pressure bound follows how fast runs finish, within its floor and the fixed bound."""

from konnectz_runner.ingress.backlog import Backlog


def _feed(backlog: Backlog, rate: int, seconds: float, depth: int, start: float = 0.0, done0: int = 0) -> None:
    t, done = start, done0
    while t < start + seconds:
        t += 0.25
        done += int(rate * 0.25)
        backlog.observe(t, depth=depth, delivered=done + 64, ack_pending=64)


def test_the_bound_is_seconds_of_work_at_the_current_rate() -> None:
    backlog = Backlog(max_runs=1000, max_seconds=1.5, floor=128)
    assert backlog.bound == 128  # idle: a burst of the floor is taken before any rate is known
    _feed(backlog, rate=400, seconds=10, depth=500)
    assert 380 <= backlog.rate <= 420
    assert 570 <= backlog.bound <= 630  # 1.5 s of work at 400/s, not the fixed 1,000
    assert not backlog.full()
    backlog.observe(11.0, depth=700, delivered=4000 + 64 + 300, ack_pending=64)
    assert backlog.full()  # 700 waiting would take about 1.75 s: refused
    _feed(backlog, rate=2000, seconds=10, depth=900, start=11.0, done0=4300)
    assert backlog.bound == 1000 and not backlog.full()  # never above the fixed bound
    _feed(backlog, rate=0, seconds=10, depth=200, start=21.0, done0=24300)
    assert backlog.bound == 128 and backlog.full()  # nothing finishes: only the floor


def test_zero_seconds_keeps_only_the_fixed_bound() -> None:
    backlog = Backlog(max_runs=1000, max_seconds=0, floor=128)
    _feed(backlog, rate=10, seconds=5, depth=999)
    assert backlog.bound == 1000 and not backlog.full()
    backlog.observe(6.0, depth=1000, delivered=0, ack_pending=0)  # a reset consumer: the rate is kept
    assert backlog.full()
