"""Call a flow, on the api's side (docs/sub-flows.md).

- :func:`serve_calls`: answers the runners' requests to start a called flow's run (NATS request-reply on
  ``kz.calls.start``, one queue group over every api replica; the wire is :mod:`konnectz_contracts.calls`).
  The api is the one that knows every published flow and its owner: it checks, on the parsed request,
  that the called flow belongs to the owner of the *calling* flow (looked up from its id, never taken
  from the request), is published with the *Called by a flow or AI tool* trigger, the arguments against
  its inputs and the depth, then stores the run in ``KZ_RUNS`` (source ``call``, ``called_by`` the caller).
- :func:`check_calls`: at publish, the flows a flow's Call a Flow steps call must be the account's own,
  published, flow-call flows; the account's published flows may not call in a cycle (the message names
  the flows), nor in a chain deeper than :data:`~konnectz_contracts.limits.MAX_CALL_DEPTH`.
- :func:`callable_flows`: the editor's flow picker (``GET /api/v1/konnects/callable``).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from nats.aio.msg import Msg
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from konnectz_api.bus import Bus
from konnectz_api.compile.flow import CompileError
from konnectz_api.models import Konnect
from konnectz_api.params import MAX_ID
from konnectz_contracts.calls import CALL_SUBJECT, CallStart, CallStarted
from konnectz_contracts.events import RunRequest, Unstorable
from konnectz_contracts.limits import MAX_CALL_DEPTH
from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.steps.call_flow import called_flows
from konnectz_contracts.triggers.flow_call import FlowCallTrigger, check_arguments
from konnectz_runner import Outage
from konnectz_runner.bus import publish_run
from konnectz_runner.engine import CallRefused

__all__ = ["ReviewCalls", "callable_flows", "check_calls", "decide_start", "review_callee", "serve_calls"]

log = logging.getLogger(__name__)
QUEUE = "api-calls"
#: Start requests one api process answers at once (each reads PostgreSQL in the thread pool).
CONCURRENT = 16
NOT_TRIGGER = "does not start with the 'Called by a flow or AI tool' trigger"


def trigger_of(konnect: Konnect) -> FlowCallTrigger | None:
    """The flow-call trigger of a published flow (None: not published, or another trigger)."""
    spec = konnect.published_spec if isinstance(konnect.published_spec, dict) else {}
    trigger = spec.get("trigger")
    if konnect.status != "Published" or not isinstance(trigger, dict) or trigger.get("kind") != "flow_call":
        return None
    try:
        return FlowCallTrigger.model_validate(trigger)
    except ValidationError:
        return None


def _name(konnect: Konnect) -> str:
    return konnect.konnect_name or f"flow {konnect.id}"


def _why_not(konnect: Konnect | None, owner_id: int, flow_id: int) -> str | None:
    """Why flow ``flow_id`` cannot be called by a flow of ``owner_id`` (None: it can)."""
    if konnect is None or konnect.owner_id != owner_id:  # another account's flow: as if it did not exist
        return f"Flow {flow_id} does not exist or is not yours"
    if konnect.status != "Published":
        return f"The flow '{_name(konnect)}' ({flow_id}) is not published: publish it first"
    if trigger_of(konnect) is None:
        return f"The flow '{_name(konnect)}' ({flow_id}) {NOT_TRIGGER}"
    return None


def decide_start(session: Session, request: CallStart) -> tuple[CallStarted, RunRequest | None]:
    """The answer to a start request, and the run to store when it is allowed (blocking: thread pool)."""
    flow_id = request.flow_id
    caller = session.get(Konnect, request.caller.konnect_id) if 0 < request.caller.konnect_id <= MAX_ID else None
    if caller is None:
        return CallStarted(flow_id=flow_id, error="The calling flow no longer exists", status=404), None
    callee = session.get(Konnect, flow_id) if flow_id <= MAX_ID else None
    why = _why_not(callee, caller.owner_id, flow_id)
    if why is not None:
        return CallStarted(flow_id=flow_id, error=why, status=404 if "not yours" in why else 409), None
    assert callee is not None
    trigger = trigger_of(callee)
    assert trigger is not None
    name = _name(callee)
    if request.caller.depth > MAX_CALL_DEPTH:
        error = f"Calling '{name}' would nest flow calls {request.caller.depth} deep; the limit is {MAX_CALL_DEPTH}"
        return CallStarted(flow_id=flow_id, flow_name=name, error=error, status=422), None
    values, errors = check_arguments(trigger, request.arguments)
    if errors:
        listed = "; ".join(f"{key}: {message}" for key, message in errors.items())
        error = f"The inputs of '{name}' were refused (no run started): {listed}"
        return CallStarted(flow_id=flow_id, flow_name=name, error=error[:2000], status=422), None
    run = RunRequest(
        run_id=request.run_id,
        konnect_id=flow_id,
        trigger_output=values,
        received_at=datetime.now(UTC),
        source="call",
        called_by=request.caller,
    )
    return CallStarted(run_id=run.run_id, flow_id=flow_id, flow_name=name), run


async def answer(bus: Bus, sessions: sessionmaker[Session], data: bytes) -> CallStarted:
    """The reply to one request (raises when the database is unavailable: no answer, the step retries)."""
    try:
        request = CallStart.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return CallStarted(flow_id=0, error=f"Invalid request to start a flow: {where}: {first.get('msg')}", status=400)

    def decide() -> tuple[CallStarted, RunRequest | None]:
        with sessions() as session:
            return decide_start(session, request)

    reply, run = await asyncio.to_thread(decide)
    if run is None:
        return reply
    try:
        await publish_run(bus.js, run)
    except Unstorable as exc:
        return reply.model_copy(
            update={"run_id": None, "error": f"The run cannot be stored: {exc.message}", "status": exc.status}
        )
    except Exception as exc:  # NATS slow or away: the step may try again (same run id: stored once)
        error = f"The run could not be stored, try again: {exc or type(exc).__name__}"
        return reply.model_copy(update={"run_id": None, "error": error, "status": 503})
    log.info("Run %s of flow %s started by run %s", run.run_id, run.konnect_id, request.caller.run_id)
    return reply


async def serve_calls(bus: Bus, sessions: sessionmaker[Session], stop: asyncio.Event) -> None:
    """Subscribe once NATS is up and answer start requests until ``stop``."""
    await bus.ready.wait()
    assert bus.nc is not None
    database = Outage("Call a flow (database)", log)

    async def handle(msg: Msg) -> None:
        try:
            reply = await answer(bus, sessions, msg.data)
        except Exception as exc:  # the database is down: no answer, the runner's request times out
            database.failed(exc)
            return
        database.ok()
        try:
            await msg.respond(reply.model_dump_json().encode())
        except Exception as exc:  # the runner gave up waiting: it asks again (the same run id)
            log.debug("call reply not sent: %s", exc)

    tasks: set[asyncio.Task[None]] = set()
    busy = asyncio.Semaphore(CONCURRENT)

    async def bounded(msg: Msg) -> None:
        async with busy:  # at most CONCURRENT database reads at once; the others wait (the runner, 10 s)
            await handle(msg)

    async def spawn(msg: Msg) -> None:  # each request on its own: a slow database holds up no other
        task = asyncio.create_task(bounded(msg))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    sub = await bus.nc.subscribe(CALL_SUBJECT, queue=QUEUE, cb=spawn)
    try:
        await stop.wait()
    finally:
        try:
            await sub.unsubscribe()
        except Exception:  # noqa: S110 - the connection is closing anyway
            pass
        for task in tasks:
            task.cancel()


# --- publishing: who calls whom -------------------------------------------------------------------


def _calls_of(spec: Any) -> list[int]:
    """The flow ids a published spec (a dict) calls."""
    steps = spec.get("steps") if isinstance(spec, dict) else None
    found: list[int] = []
    for step in steps if isinstance(steps, list) else ():
        if isinstance(step, dict) and step.get("kind") == "call_flow" and isinstance(step.get("flow_id"), int):
            found.append(step["flow_id"])
        if isinstance(step, dict) and step.get("kind") == "agent" and isinstance(step.get("tools"), list):
            found += [  # an Agent's sub-flow tools call flows too
                tool["konnect_id"]
                for tool in step["tools"]
                if isinstance(tool, dict) and tool.get("kind") == "flow" and isinstance(tool.get("konnect_id"), int)
            ]
    return list(dict.fromkeys(found))


def _graph(session: Session, owner_id: int) -> tuple[dict[int, list[int]], dict[int, str]]:
    """Who calls whom among the account's published flows, and their names."""
    rows = session.execute(
        select(Konnect.id, Konnect.konnect_name, Konnect.published_spec).where(
            Konnect.owner_id == owner_id, Konnect.status == "Published"
        )
    ).all()
    edges = {row.id: _calls_of(row.published_spec) for row in rows}
    names = {row.id: row.konnect_name or f"flow {row.id}" for row in rows}
    return edges, names


def _cycle(edges: dict[int, list[int]], start: int) -> list[int] | None:
    """A cycle through ``start`` (its flows, ``start`` first and last), or None."""
    stack: list[tuple[int, int]] = [(start, 0)]
    path: list[int] = [start]
    on_path = {start}
    done: set[int] = set()
    while stack:
        node, index = stack[-1]
        nexts = edges.get(node, [])
        if index >= len(nexts):
            stack.pop()
            path.pop()
            on_path.discard(node)
            done.add(node)
            continue
        stack[-1] = (node, index + 1)
        child = nexts[index]
        if child == start:
            return [*path, start]
        if child in on_path or child in done:
            continue
        stack.append((child, 0))
        path.append(child)
        on_path.add(child)
    return None


def _longest(edges: dict[int, list[int]], start: int, limit: int) -> list[int]:
    """A longest chain of calls from ``start``, found level by level (at most ``limit + 1`` levels, so
    O(levels x calls) whatever the account's flows)."""
    levels: list[dict[int, int | None]] = [{start: None}]
    for _ in range(limit + 1):
        following: dict[int, int | None] = {}
        for node in levels[-1]:
            for child in edges.get(node, []):
                following.setdefault(child, node)
        if not following:
            break
        levels.append(following)
    at: int | None = next(iter(levels[-1]))
    chain: list[int] = []
    for level in reversed(levels):
        assert at is not None
        chain.append(at)
        at = level[at]
    return list(reversed(chain))


def check_calls(session: Session, spec: FlowSpec, owner_id: int) -> None:
    """Raise CompileError when the flow's Call a Flow steps cannot be published as they are."""
    callees = called_flows(spec.steps)
    if not callees:
        return
    for flow_id in callees:
        step = next(s for s in spec.steps if flow_id in called_flows([s]))
        if flow_id == spec.konnect_id:
            raise CompileError(f"{step.name}: a flow cannot call itself (a cycle: '{spec.name}' calls '{spec.name}')")
        why = _why_not(session.get(Konnect, flow_id) if flow_id <= MAX_ID else None, owner_id, flow_id)
        if why is not None:
            raise CompileError(f"{step.name}: {why}")
    edges, names = _graph(session, owner_id)
    edges[spec.konnect_id] = callees
    names[spec.konnect_id] = spec.name

    def named(chain: list[int]) -> str:
        return " → ".join(f"'{names.get(k, f'flow {k}')}'" for k in chain)

    cycle = _cycle(edges, spec.konnect_id)
    if cycle is not None:
        raise CompileError(f"Call a Flow: the flows would call each other in a cycle: {named(cycle)}")
    down = _longest(edges, spec.konnect_id, MAX_CALL_DEPTH)
    reverse: dict[int, list[int]] = {}
    for caller, called in edges.items():
        for flow_id in called:
            reverse.setdefault(flow_id, []).append(caller)
    up = list(reversed(_longest(reverse, spec.konnect_id, MAX_CALL_DEPTH)))
    chain = [*up, *down[1:]]
    if len(chain) - 1 > MAX_CALL_DEPTH:
        raise CompileError(
            f"Call a Flow: flows would call flows {len(chain) - 1} levels deep ({named(chain)}); "
            f"the limit is {MAX_CALL_DEPTH}"
        )


def callable_flows(session: Session, owner_id: int) -> list[dict[str, Any]]:
    """The account's published flows that start with the flow-call trigger, with their inputs."""
    rows = session.scalars(
        select(Konnect).where(Konnect.owner_id == owner_id, Konnect.status == "Published").order_by(Konnect.id)
    )
    found: list[dict[str, Any]] = []
    for konnect in rows:
        trigger = trigger_of(konnect)
        if trigger is not None:
            found.append(
                {
                    "id": konnect.id,
                    "name": _name(konnect),
                    "description": trigger.description,
                    "inputs": [field.model_dump(mode="json") for field in trigger.inputs],
                }
            )
    return found


def review_callee(session: Session, owner_id: int, flow_id: int) -> tuple[FlowCallTrigger, str]:
    """Test & Review: the called flow's trigger and name (raises CallRefused saying why it cannot be called)."""
    callee = session.get(Konnect, flow_id) if flow_id <= MAX_ID else None
    why = _why_not(callee, owner_id, flow_id)
    if why is not None:
        raise CallRefused(why)
    assert callee is not None
    trigger = trigger_of(callee)
    assert trigger is not None
    return trigger, _name(callee)


class ReviewCalls:
    """Test & Review's ``FLOW_CALLS``: checks the inputs as a run would, and starts nothing (a test has
    no effects on other flows)."""

    NOT_STARTED = "Not started: Test & Review checks the call (the flow, its inputs) without running the flow"

    def __init__(self, flow_id: int, trigger: FlowCallTrigger, name: str) -> None:
        self.flow_id, self.trigger, self.name = flow_id, trigger, name

    async def start(
        self, flow_id: int, arguments: dict[str, Any], *, step_id: str, wait: bool, item_index: int | None = None
    ) -> dict[str, Any]:
        del step_id, wait, item_index
        values, errors = check_arguments(self.trigger, arguments)
        if errors:
            listed = "; ".join(f"{key}: {message}" for key, message in errors.items())
            raise CallRefused(f"The inputs of '{self.name}' would be refused: {listed}")
        return {"run_id": None, "flow_id": flow_id, "flow_name": self.name, "inputs": values, "test": self.NOT_STARTED}
