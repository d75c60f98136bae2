"""What one run costs, counted rather than timed, so the guard is not noisy (docs/performance.md).

A Webhook -> API Call flow runs ``RUNS`` times, one at a time (each run logged before the next is
posted, so nothing is batched and the counts do not depend on timing), on the real stack (`make
dev`'s processes and defaults: api, runner, PostgreSQL, NATS with JetStream). A spy subscribed to
every subject counts what the processes send through NATS, by kind: JetStream API requests
(``$JS.API.…``, key-value reads included), messages on stream subjects (run requests and task
events, each seen twice: published, then delivered to its consumer; key-value writes) and acks;
and PostgreSQL's ``pg_stat_statements`` counts the statements the api runs. Each count per run must
stay within ``RUN_BUDGET``; the failure message lists what each run did, subject by subject.

What the processes send by the clock whatever runs (the runner's queue-depth poll, leader renewals,
pull requests that expire) is measured in a quiet window first and taken off. The budget is what a run
does today, with ``SLACK`` for what is left of that noise: one more round trip per run is over it, and
``test_the_guard_sees_one_more_round_trip_per_run`` shows so. When a change makes a run cheaper,
lower the budget in the same commit; when it must make a run dearer, raise it there and say why.

The api's hot read routes have their own budget, per call, in ``READ_BUDGET``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import nats
import psycopg
import pytest

from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import _tempdir as tempdir
from konnectz_devstack.pytest_plugin import make_platform
from konnectz_devstack.testing import review_node, sign_up, wait_until, webhook_canvas

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("run-budget")]

RUNS = 300
SLACK = 0.5
#: Per run of a Webhook -> API Call flow, runs arriving one at a time (the dearest case: no batching).
#: Measured 2026-11-29 (docs/performance.md, "What a run costs, counted"): 1 write to KZ_STEPS (the API
#: call's started mark; its result is folded into the TaskEvent, journal.StepJournal.fold_last), a quota
#: reservation round trip and five quota statements, whatever the flow uses; issue 34 is to take them off
#: a run that does not need them. (Gone: the two reads of KZ_CANCELS per run, as the worker follows the
#: bucket with one watch, active.CancelBook; the two writes to KZ_ACTIVE of a run that ends within
#: LISTED_AFTER_SECONDS, active.ActiveWatch; the run request's deletion from KZ_RUNS, now one purge a
#: second below the consumer's ack floor for all the runs finished meanwhile, RunWorker._sweep.)
RUN_BUDGET: dict[str, float] = {
    "js_api": 2.0,  # JetStream API requests: 2 pull requests
    "stored": 6.0,  # on stream subjects: run requests and task events (published, delivered), KV writes
    "acks": 2.0,
    "replies": 6.0,  # replies to requests (JetStream API, publish acks, quota) and pulled messages
    "advisories": 0.0,  # the server's own, for JetStream API requests other than pulls (the sweep's: < 0.1)
    "pg_statements": 14.0,  # BEGIN and COMMIT included; the quota's reservation is 5 of them
}
#: Per call of each hot read route.
READ_BUDGET: dict[str, float] = {
    # One statement checks the token (revoked? session version?), one reads the page.
    "flow list": 2.0,
    "flow list search": 2.0,
    "folder list": 2.0,
    "history list": 2.0,
    "history of a flow": 2.0,
    "dashboard stats": 2.0,
}

PROBE = "budget_probe"  # the test's own PostgreSQL role: its statements are not counted


def kind_of(subject: str) -> str:
    """The kind of a message, by its subject (ids and keys left out)."""
    if subject.startswith("_INBOX"):  # _INBOX_api., _INBOX_runner. (konnectz_contracts.nats_auth)
        return "replies"
    if subject.startswith("$JS.ACK."):
        return "acks"
    if subject.startswith("$JS.API."):
        return "js_api"
    if subject.startswith("$JS.EVENT.") or subject.startswith("$SYS."):
        return "advisories"
    return "stored"


def shape_of(subject: str) -> str:
    """The subject with what varies per run left out: ``$KV.KZ_SLOTS.*``, ``$JS.ACK.KZ_RUNS.*``."""
    parts = subject.split(".")
    if subject.startswith("_INBOX"):
        return subject.split(".", 1)[0] + ".*"
    if subject.startswith(("$KV.", "$JS.ACK.")):
        return ".".join(parts[:2] if subject.startswith("$KV.") else parts[:3]) + ".*"
    if subject.startswith("$JS.API.DIRECT.GET.") or subject.startswith("$JS.API.STREAM.MSG.GET."):
        return ".".join(parts[: 5 if "DIRECT" in subject else 6])
    if subject.startswith("$JS.API.CONSUMER."):
        return ".".join(parts[:5]) + "." + ".".join(re.sub(r"\d+", "#", p) for p in parts[5:])
    if subject.startswith("$JS.API."):
        return ".".join(parts[:5])
    return ".".join(re.sub(r"^\d+$", "#", p) for p in parts[:3])


@dataclass
class Spy:
    """Every message on the bus in a window, by subject; and, measured first in a quiet window, what the
    processes send by the clock whatever runs (the queue-depth poll, leader renewals), which is taken
    off, so a slow machine does not change the counts."""

    subjects: Counter[str] = field(default_factory=Counter)
    counting: bool = False
    seconds: float = 0.0
    idle: Counter[str] = field(default_factory=Counter)
    idle_seconds: float = 1.0

    async def on_message(self, msg: Any) -> None:
        if self.counting:
            self.subjects[msg.subject] += 1

    async def count(self, seconds: float) -> None:
        """Count the quiet background for ``seconds``."""
        self.subjects.clear()
        self.counting = True
        await asyncio.sleep(seconds)
        self.counting = False
        self.idle, self.idle_seconds, self.subjects = Counter(self.subjects), seconds, Counter()

    def per_run(self, runs: int) -> tuple[dict[str, float], dict[str, float]]:
        kinds: dict[str, float] = {}
        shapes: dict[str, float] = {}
        share = self.seconds / self.idle_seconds
        for subject in set(self.subjects) | set(self.idle):
            n = self.subjects[subject] - self.idle[subject] * share
            kinds[kind_of(subject)] = kinds.get(kind_of(subject), 0.0) + n
            shapes[shape_of(subject)] = shapes.get(shape_of(subject), 0.0) + n
        ordered = sorted(shapes.items(), key=lambda item: -item[1])
        return ({k: max(n, 0.0) / runs for k, n in kinds.items()}, {s: round(n / runs, 2) for s, n in ordered})


def over_budget(measured: dict[str, float], budget: dict[str, float]) -> dict[str, tuple[float, float]]:
    """The counts above their budget (a count without a budget is over a budget of 0)."""
    return {
        name: (round(value, 2), budget.get(name, 0.0))
        for name, value in measured.items()
        if value > budget.get(name, 0.0) + SLACK
    }


def statements(probe: psycopg.Connection[Any]) -> Counter[str]:
    rows = probe.execute(
        "SELECT query, calls FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname <> %s",
        (PROBE,),
    ).fetchall()
    found: Counter[str] = Counter()
    for query, calls in rows:
        found[" ".join(query.split())[:160]] += calls
    return found


@pytest.fixture(scope="module")
def stack() -> Iterator[Any]:
    state = tempdir("konnectz-budget-")
    plat = make_platform(state)
    plat.postgres.settings.update({"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "top"})
    plat.start()
    try:
        with psycopg.connect(plat.postgres.dsn, autocommit=True) as admin:
            admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            admin.execute(f"CREATE ROLE {PROBE} LOGIN SUPERUSER")
        yield plat
    finally:
        plat.stop()


class _Sink(JsonHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._reply(201, {"accepted": True})


@pytest.fixture(scope="module")
def sink() -> Iterator[LocalServer]:
    server = LocalServer(_Sink)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def flow(stack: Any, sink: LocalServer) -> dict[str, Any]:
    api = httpx.Client(base_url=stack.api_url, timeout=30)
    headers = sign_up(api, "budget@example.com", "correct horse battery")
    canvas = webhook_canvas(f"{sink.url}/orders", name="Budget", body=[{"key": "id", "value": "{{node-1.id}}"}])
    konnect_id = int(review_node(api, headers, canvas, canvas["apps"][0]["id"])["konnect_id"])
    r = api.post(
        "/api/v1/konnects/publish_konnect",
        headers=headers,
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas},
    )
    assert r.status_code == 200, r.text
    hook = r.json()["webhook_url"]
    wait_until(lambda: httpx.post(hook, json={"id": 0}, timeout=10).status_code == 200)
    return {"api": api, "headers": headers, "konnect_id": konnect_id, "hook": hook, "posted": 1}


def _probe(stack: Any) -> psycopg.Connection[Any]:
    dsn = stack.postgres.dsn.replace("postgres@", f"{PROBE}@")
    return psycopg.connect(dsn, autocommit=True)


async def _measure_runs(
    stack: Any, flow: dict[str, Any], extra: Any = None, runs: int = RUNS
) -> tuple[Spy, Counter[str]]:
    """Post ``runs`` webhooks one at a time; count the bus and the database until every run is logged."""
    spy = Spy()
    nc = await nats.connect(stack.nats.admin_url)  # the test's own user sees every subject
    try:
        await nc.subscribe(">", cb=spy.on_message)
        await nc.flush()
        with _probe(stack) as probe:

            def logged() -> int:
                row = probe.execute("SELECT count(*) FROM task_logs WHERE konnect_id = %s", (flow["konnect_id"],))
                found = row.fetchone()
                assert found is not None
                return int(found[0])

            before = flow["posted"]
            wait_until(lambda: logged() == before, what="the runs before this one logged")
            await asyncio.sleep(1)  # their last events
            await spy.count(3.0)
            probe.execute("SELECT pg_stat_statements_reset()")
            began = time.monotonic()
            spy.counting = True
            async with httpx.AsyncClient(timeout=10) as http:
                for i in range(runs):
                    r = await http.post(flow["hook"], json={"id": i + 1})
                    assert r.status_code == 200, r.text
                    flow["posted"] += 1
                    if extra is not None:
                        await extra(nc)
                    # One at a time, each logged before the next: no batching, so the counts do not depend
                    # on timing (and this is the dearest case per run).
                    for _ in range(2000):
                        if logged() == flow["posted"]:
                            break
                        await asyncio.sleep(0.005)
                    else:
                        raise AssertionError(f"run {i + 1} was not logged within 10 s")
            await asyncio.sleep(0.5)  # the events of the last run
            spy.counting = False
            spy.seconds = time.monotonic() - began
            return spy, statements(probe)
    finally:
        await nc.close()


def _report(kinds: dict[str, float], shapes: dict[str, float], sql: Counter[str], runs: int) -> str:
    lines = ["per run, by kind: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(kinds.items()))]
    lines += [f"  {n:6.2f}  {shape}" for shape, n in shapes.items() if n >= 0.05]
    lines += ["PostgreSQL statements per run:"]
    lines += [f"  {n / runs:6.2f}  {q}" for q, n in sql.most_common() if n / runs >= 0.05]
    return "\n".join(lines)


async def test_a_run_stays_within_its_operation_budget(stack: Any, flow: dict[str, Any]) -> None:
    spy, sql = await _measure_runs(stack, flow)
    kinds, shapes = spy.per_run(RUNS)
    measured = {**kinds, "pg_statements": sum(sql.values()) / RUNS}
    report = _report(kinds, shapes, sql, RUNS)
    print(report)
    assert not over_budget(measured, RUN_BUDGET), f"over budget: {over_budget(measured, RUN_BUDGET)}\n{report}"


async def test_the_guard_sees_one_more_round_trip_per_run(stack: Any, flow: dict[str, Any]) -> None:
    """A change that added one JetStream request per run (here the test's own, made beside each run)
    would fail the budget: one more round trip is more than the slack."""

    async def one_more(nc: Any) -> None:
        await nc.request("$JS.API.STREAM.INFO.KZ_RUNS", b"", timeout=5)

    spy, sql = await _measure_runs(stack, flow, extra=one_more, runs=100)
    kinds, _shapes = spy.per_run(100)
    over = over_budget({**kinds, "pg_statements": sum(sql.values()) / 100}, RUN_BUDGET)
    assert set(over) == {"js_api", "replies", "advisories"}, over


READ_ROUTES = {
    "flow list": "/api/v1/konnects?page_size=20&page_index=1&folder=home",
    "flow list search": "/api/v1/konnects?page_size=20&page_index=1&search_query=orders",
    "folder list": "/api/v1/folders/list",
    "history list": "/api/v1/task_logs/konnects?page_size=30&page_index=1",
    "history of a flow": (
        "/api/v1/task_logs/logs?konnect_id={konnect_id}&task_log_type=SUCCESS&page_index=1&page_size=60"
    ),
    "dashboard stats": "/api/v1/dashboard/stats",
}


def test_the_hot_read_routes_stay_within_their_statement_budget(stack: Any, flow: dict[str, Any]) -> None:
    """Statements per call of each route. The api's own timers (retention, digests, quota clean-up) run
    statements too, more of them the longer a loaded machine takes; they are not run once per call,
    so only the statements run at least once per call count (an extra one per call would)."""
    calls = 20
    api, headers = flow["api"], flow["headers"]
    measured: dict[str, float] = {}
    detail: list[str] = []
    with _probe(stack) as probe:
        for name, path in READ_ROUTES.items():
            url = path.format(konnect_id=flow["konnect_id"])
            assert api.get(url, headers=headers).status_code == 200  # warm: caches, prepared statements
            probe.execute("SELECT pg_stat_statements_reset()")
            for _ in range(calls):
                r = api.get(url, headers=headers)
                assert r.status_code == 200, r.text
            sql = statements(probe)
            measured[name] = sum(n for n in sql.values() if n >= calls) / calls
            detail += [f"{name}: {measured[name]:.2f}"] + [f"  {n / calls:5.2f}  {q}" for q, n in sql.most_common()]
    report = "\n".join(detail)
    print(report)
    assert not over_budget(measured, READ_BUDGET), f"over budget: {over_budget(measured, READ_BUDGET)}\n{report}"
