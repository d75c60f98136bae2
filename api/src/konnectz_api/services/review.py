"""Test & Review: one node of a canvas, run in the api by the runner's own step code.

- The trigger: its test creates the konnect (a draft) when the editor has no konnect_id yet, so
  the webhook URL exists; its output is the request captured at that URL
  (:mod:`konnectz_api.services.capture`), or ``{}`` until one was captured.
- An action: compiled by the same compiler as publishing (:mod:`konnectz_api.compile.compilers`), then
  run once by :func:`konnectz_runner.engine.steps.run_step` with the outputs of the upstream nodes'
  tests as its context, through the runner's outbound guard (private addresses refused unless
  ``KONNECTZ_ALLOW_PRIVATE_NETWORKS`` allows them), with a shorter timeout and a smaller
  response limit than a run. After an iterator, the first item stands for the iterator's output.

Each result is stored as the node's konnect activity (one per node; testing again replaces it).

Nothing here waits on the database on the event loop: the reads before a test and the one
transaction that stores its result run in the thread pool (:func:`konnectz_api.db.run_db`), and no transaction is
open while a step or an app is called. A trigger test that creates the konnect takes the plan caps'
lock on the owner's row last, inside that short transaction, after the sample is known: a refused
test leaves no konnect behind.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
from sqlalchemy.orm import Session

from konnectz_api import catalogue, step_secrets
from konnectz_api.compile import trigger_filter
from konnectz_api.compile.compilers import TriggerInput, catalogue_app, compile_step, compile_trigger, script_of
from konnectz_api.compile.flow import ONLY_ONCE, CompileError, check_references
from konnectz_api.compile.plan import Plan, plan, router_plans
from konnectz_api.core.config import Settings
from konnectz_api.core.security import new_token
from konnectz_api.crud import activities, app_accounts, caps
from konnectz_api.crud.users import user_timezone
from konnectz_api.db import commit_only, run_db
from konnectz_api.errors import NotFound, Unprocessable
from konnectz_api.jsonb import jsonb_safe
from konnectz_api.models import Konnect, User
from konnectz_api.schemas import KonnectCustom, TestAndReviewIn, TestAndReviewOut
from konnectz_api.services import flow_calls
from konnectz_api.services.app_calls import AppCallError, app_client
from konnectz_api.services.credential_broker import cipher, fresh_credentials, refresh_credentials
from konnectz_api.services.rate_budgets import use_account
from konnectz_contracts.canvas import Node
from konnectz_contracts.compiling import is_blank
from konnectz_contracts.errors import StepError
from konnectz_contracts.steps import join
from konnectz_contracts.triggers import flow_call, flow_failed
from konnectz_contracts.triggers.polling import Cursor, PollingTrigger, newest_item
from konnectz_contracts.triggers.schedule import next_fire, trigger_output
from konnectz_runner.apps import Budgets, NetGuard, guarded_transport
from konnectz_runner.engine import FLOW_CALLS, CallRefused, StepContext, app_items, join_merge, run_step

__all__ = [
    "MANDATORY",
    "TEST_TRIGGER_FIRST",
    "UNABLE",
    "TestRefused",
    "owned_konnect",
    "run_test",
    "webhook_url",
]

MANDATORY = "Please fill the values of mandatory fields before Testing"
TEST_TRIGGER_FIRST = "Test Your {app_name} after testing your Triggering app"
UNABLE = "Unable to process the test with these inputs. Please provide appropriate inputs."
DELETED = "DELETED"
USER_AGENT = "Konnectz-Test/0.1"


class TestRefused(Unprocessable):
    """The test did not run; the reply carries test_status Error and the message to show."""

    def __init__(self, message: str) -> None:
        super().__init__(message, test_status="Error", display_message=message)


@asynccontextmanager
async def _test_client(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, NetGuard]]:
    """The HTTP client of a test (a step's Test & Review, a polling trigger's sample): guarded, with
    the test's timeout."""
    guard = NetGuard(settings.allow_private_networks)
    async with httpx.AsyncClient(
        transport=guarded_transport(guard),
        timeout=settings.test_timeout_seconds,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
    ) as http:
        yield http, guard


def webhook_url(settings: Settings, konnect: Konnect) -> str:
    return f"{settings.webhook_base_url.rstrip('/')}/hooks/{konnect.webhook_token}"


def owned_konnect(session: Session, user: User, konnect_id: int) -> Konnect:
    konnect = session.get(Konnect, konnect_id)
    if konnect is None or konnect.owner_id != user.id or konnect.status == DELETED:
        raise NotFound(f"Konnect {konnect_id} not found")
    return konnect


def _missing_mandatory(node: Node) -> bool:
    return any(entry.config_key_required and is_blank(entry.value) for entry in node.data.configResponses or ())


def konnect_custom(node: Node, konnect: Konnect) -> KonnectCustom | None:
    """A custom-script trigger's test answers ``konnect_custom``: the editor opens its script's page."""
    return KonnectCustom(script_id=konnect.id) if script_of(node) is not None else None


def script_test_message(node: Node, received: bool) -> str:
    found = script_of(node)
    platform = found[2].platform if found else "the app"
    if received:
        return "The script's request is the trigger's data"
    return f"Install the script ({platform}) shown in the popup, then send a response to see its data here"


def _test_view(activity: Any) -> Any:
    """What later nodes see of a tested node: after an iterator, its first item."""
    output = activity.output
    if activity.kind == "iterator" and isinstance(output, dict) and isinstance(output.get("items"), list):
        return output["items"][0] if output["items"] else {}
    return output


async def run_test(
    session: Session, settings: Settings, user: User, body: TestAndReviewIn, budgets: Budgets | None = None
) -> TestAndReviewOut:
    """Test one node. ``budgets``: the rate budgets shared with the runners (None: requests with an
    account are spaced within this process only)."""
    canvas = jsonb_safe(body.canvas_json.model_dump(mode="json"))
    by_name = step_secrets.sealed_by_name(canvas)  # listed names: secret whatever the client sent
    if body.konnect_id is not None:
        # Secret values typed into steps are encrypted before anything else sees the canvas; a masked
        # one is the value stored for this konnect (what the test then uses, opened in _test_action).
        stored = await run_db(session, owned_konnect, user, body.konnect_id)
        canvas = step_secrets.seal_canvas(canvas, stored.canvas_json, cipher=cipher(settings), konnect_id=stored.id)
    try:
        flow = plan(canvas, require_linked=False)
    except CompileError as exc:
        raise TestRefused(str(exc)) from exc
    node_id = body.tested_node or (flow.trigger.id if body.left_app_id is not None else None)
    if node_id is None:
        raise TestRefused("node_id is required: which node to test")
    node = flow.canvas.node(node_id)
    if node is None:
        raise TestRefused(f"The canvas has no node {node_id!r}")
    if _missing_mandatory(node):
        raise TestRefused(MANDATORY)
    if node is flow.trigger:
        reply = await _test_trigger(session, settings, user, body, flow, canvas, budgets)
    else:
        reply = await _test_action(session, settings, user, body, flow, node, canvas, budgets)
    reply.sealed_by_name = by_name  # the tested canvas was stored sealed (_store_trigger_test, _store_canvas)
    return reply


async def _test_trigger(
    session: Session,
    settings: Settings,
    user: User,
    body: TestAndReviewIn,
    flow: Plan,
    canvas: dict[str, Any],
    budgets: Budgets | None = None,
) -> TestAndReviewOut:
    node = flow.trigger
    konnect = None if body.konnect_id is None else await run_db(session, owned_konnect, user, body.konnect_id)
    token = konnect.webhook_token if konnect is not None else new_token()
    try:
        trigger = compile_trigger(node, TriggerInput(webhook_token=token, timezone=user_timezone(user)))
    except CompileError as exc:
        raise TestRefused(str(exc)) from exc
    url = f"{settings.webhook_base_url.rstrip('/')}/hooks/{token}"
    status = activities.SUCCESS
    if trigger.kind == "polling" and trigger.app_id is not None:
        try:
            output, message = await app_trigger_sample(session, settings, user, trigger, budgets)
        except AppCallError as exc:
            status, output, message = "Error", {}, str(exc) or UNABLE
    elif trigger.kind == "webhook":
        earlier = (
            await run_db(session, activities.get_activity, owner_id=user.id, konnect_id=konnect.id, node_id=node.id)
            if konnect is not None
            else None
        )
        output = earlier.output if earlier is not None and earlier.status == activities.SUCCESS else None
        if isinstance(output, dict) and output:
            message = "Webhook tested: the captured request is the trigger's data"
        elif trigger.app:
            output, message = _app_webhook_sample(node, trigger)
        else:
            output = {}
            message = f"Send a request to {url}, then click Capture Response to use it as the trigger's data"
        if script_of(node) is not None:
            message = script_test_message(node, received=bool(output))
    else:
        output, message = _trigger_sample(trigger, url)
    choice = body.trigger_filter
    if status == activities.SUCCESS and choice is not None and choice.labels and (output or trigger.kind != "webhook"):
        # The drawer's AND/OR and labels (a webhook with nothing captured yet has no sample to judge).
        sample = trigger_filter.choose_sample([output], choice)
        if sample is None:
            raise TestRefused(trigger_filter.no_match(choice))
        output, message = sample, f"{message}; it has {trigger_filter.describe(choice)}"
    stored, activity_id = await run_db(
        session,
        _store_trigger_test,
        settings,
        user,
        konnect,
        canvas,
        token,
        node_id=node.id,
        kind=node.provider or "trigger",
        app_name=node.detail.name,
        status=status,
        message=message,
        output=output,
    )
    return TestAndReviewOut(
        test_status="Success" if status == activities.SUCCESS else "Error",
        display_message=message,
        raw_response=output,
        konnect_id=stored.id,
        konnect_activity_id=activity_id,
        webhook_url=url,
        konnect_custom=konnect_custom(node, stored),
    )


def _store_trigger_test(
    session: Session,
    settings: Settings,
    user: User,
    konnect: Konnect | None,
    canvas: dict[str, Any],
    token: str,
    *,
    node_id: str,
    kind: str,
    app_name: str,
    status: str,
    message: str,
    output: Any,
) -> tuple[Konnect, int]:
    """One short transaction (``run_db``): the konnect (created when new, after the plan caps' check,
    which locks the owner's row until this commits) and the trigger's test result."""
    if konnect is None:
        caps.check(session, owner_id=user.id, kind="konnects")  # PlanLimit (403) beyond the plan's flows
        konnect = Konnect(
            owner_id=user.id,
            status="Draft",
            canvas_json=step_secrets.mask_canvas(canvas),  # no secret value, not even for a moment
            webhook_token=token,
            konnect_name=str(canvas.get("flowName") or "").strip(),
        )
        session.add(konnect)
        session.flush()
        konnect.canvas_json = step_secrets.seal_canvas(canvas, None, cipher=cipher(settings), konnect_id=konnect.id)
    else:
        konnect.canvas_json = canvas
    activity_id = activities.save_activity(
        session,
        konnect_id=konnect.id,
        owner_id=user.id,
        node_id=node_id,
        kind=kind,
        app_name=app_name,
        status=status,
        display_message=message,
        input={},
        output=output,
    )
    return konnect, activity_id


async def app_trigger_sample(
    session: Session, settings: Settings, user: User, trigger: PollingTrigger, budgets: Budgets | None = None
) -> tuple[Any, str]:
    """The newest item of a catalogue app's polling trigger, read from the live API through the
    account (credentials from the broker, refreshed when they expire), and the message to show."""
    app = catalogue.get_index().get(trigger.app_id or 0)
    if app is None:
        raise AppCallError("The app is no longer in the catalogue")
    account = None
    if app.needs_account:
        account = await run_db(session, app_accounts.get_account, owner_id=user.id, account_id=trigger.account_id or 0)
        if account is None or account.app_id != app.id:
            raise AppCallError(f"Choose a {app.name} account for this trigger")
        use_account(account)  # its rate override applies to this request too

    async def source(_account_id: int, _konnect_id: int, _owner_id: int, refresh: bool) -> dict[str, Any]:
        if account is None:
            return {}
        async with app_client(settings) as (client, client_guard):
            if refresh and app.auth.type == "oauth2":
                fresh = await refresh_credentials(
                    session, http=client, guard=client_guard, settings=settings, account=account, app=app
                )
            else:
                fresh = await fresh_credentials(
                    session, http=client, guard=client_guard, settings=settings, account=account, app=app
                )
        await run_db(session, commit_only)  # refreshed tokens are stored before the app is called with them
        return fresh

    async with _test_client(settings) as (http, guard):
        try:
            found = await asyncio.wait_for(
                app_items(
                    trigger,
                    Cursor(),
                    konnect_id=0,
                    owner_id=user.id,
                    timezone=user_timezone(user),
                    http=http,
                    guard=guard,
                    max_bytes=settings.test_max_response_bytes,
                    credential_source=source,
                    app=app,
                    budgets=budgets,
                ),
                settings.test_timeout_seconds + 5,
            )
        except TimeoutError as exc:
            raise AppCallError(f"The test took longer than {settings.test_timeout_seconds:g} s") from exc
        except (StepError, httpx.HTTPError) as exc:
            raise AppCallError(str(exc) or UNABLE) from exc
    newest = newest_item(trigger, found)
    if newest is None:
        event = app.event(trigger.event)
        sample = event.output.sample if event is not None else None
        if isinstance(sample, list):
            sample = sample[0] if sample else None
        output = sample if isinstance(sample, dict) else {}
        return output, f"No {app.name} items were found: this sample shows the fields a new item will have"
    output = newest if isinstance(newest, dict) else {"value": newest}
    return output, f"{app.name}: the newest of {len(found)} item(s) is the trigger's sample"


def _app_webhook_sample(node: Node, trigger: Any) -> tuple[Any, str]:
    """An app webhook trigger before its first delivery: the manifest's sample of what the app sends."""
    app = catalogue_app(node)
    event = app.event(trigger.event) if app is not None else None
    sample = event.output.sample if event is not None else None
    name = app.name if app is not None else trigger.app
    return (
        sample if isinstance(sample, dict) else {},
        f"Publishing subscribes this konnect at {name}: its deliveries start runs. The sample shows their fields.",
    )


#: How many upcoming fires a schedule trigger's test lists.
NEXT_RUNS_SHOWN = 3


def _trigger_sample(trigger: Any, hook_url: str) -> tuple[dict[str, Any], str]:
    """What a schedule or form trigger will output, for the later steps to map, and a message."""
    if trigger.kind == "schedule":
        fire = next_fire(trigger, datetime.now(UTC))
        if fire is None:
            raise TestRefused(f"{trigger.schedule.schedule_type}: this schedule has no run in the future")
        output = trigger_output(trigger, fire)
        # A schedule's test starts no run: it shows when the next runs will start (up to three).
        fires = [fire]
        while len(fires) < NEXT_RUNS_SHOWN and (later := next_fire(trigger, fires[-1])) is not None:
            fires.append(later)
        times = ", ".join(trigger_output(trigger, f)["local_time"] for f in fires)
        label = "Next run" if len(fires) == 1 else "Next runs"
        return output, f"{label}: {times} ({trigger.timezone})"
    if trigger.kind == "flow_failed":
        which = f"{len(trigger.flows)} chosen flow(s)" if trigger.flows else "every other flow of the account"
        return dict(flow_failed.SAMPLE_OUTPUT), (
            f"Runs once for every failed run of {which}; a sample failure is the trigger's data"
        )
    if trigger.kind == "flow_call":
        how = "an MCP tool call (/mcp) or a Call a flow step" if trigger.mcp else "a Call a flow step"
        return flow_call.sample_output(trigger), f"Runs when {how} calls it; sample inputs are the trigger's data"
    if trigger.kind == "form":
        form_url = hook_url.replace("/hooks/", "/forms/", 1)
        sample = {f.key: f.placeholder or f.label for f in trigger.fields}
        return sample, f"The form is at {form_url}; each submission starts a run with these fields"
    return {}, "Trigger tested"


async def _test_action(
    session: Session,
    settings: Settings,
    user: User,
    body: TestAndReviewIn,
    flow: Plan,
    node: Node,
    canvas: dict[str, Any],
    budgets: Budgets | None = None,
) -> TestAndReviewOut:
    first = TEST_TRIGGER_FIRST.format(app_name=node.detail.name or "app")
    if body.konnect_id is None:
        raise TestRefused(first)
    konnect, tested = await run_db(session, _tested_nodes, user, body.konnect_id)
    if flow.trigger.id not in tested:
        raise TestRefused(first)
    ends: dict[str, str | None] | None = None  # a join: each path's last node (None: an empty path)
    try:
        if join.is_join(node):
            shape = next((p for p in router_plans(flow).values() if p.join is node), None)
            compiled = join.compile_node(node, router=shape.router.id if shape is not None else "")
            ends = {p.name: p.nodes[-1].id if p.nodes else None for p in shape.paths} if shape is not None else {}
        else:
            compiled = compile_step(node)
        step = compiled[-1] if isinstance(compiled, list) else compiled  # a delay before the node is not tested
        upstream = flow.ancestors(node.id)
        check_references(node, step, upstream)
    except CompileError as exc:
        raise TestRefused(str(exc)) from exc
    if step.kind == "iterator" and any(n.provider == "iterator" and n.id != node.id for n in flow.canvas.apps):
        raise TestRefused(f"{node.label}: {ONLY_ONCE}")
    outputs = {nid: _test_view(tested[nid]) for nid in upstream if nid in tested}
    # The canvas under test is stored (committed) before the step runs: the credential broker serves
    # an app account only to a konnect whose stored canvas uses it. No transaction stays open while
    # the step waits on the network.
    await run_db(session, _store_canvas, konnect, canvas)
    calls = None
    if step.kind == "call_flow":  # call a flow: checked as a run would, nothing started
        try:
            trigger, name = await run_db(session, flow_calls.review_callee, user.id, step.flow_id)
        except CallRefused as exc:
            raise TestRefused(f"{node.label}: {exc.message}") from exc
        calls = FLOW_CALLS.set(flow_calls.ReviewCalls(step.flow_id, trigger, name))
    async with _test_client(settings) as (http, guard):
        ctx = StepContext(
            outputs=outputs,
            http=http,
            guard=guard,
            run_id=f"test-{uuid.uuid4().hex}",
            konnect_id=konnect.id,
            owner_id=user.id,
            timezone=user_timezone(user),
            max_response_bytes=settings.test_max_response_bytes,
            open_secrets=step_secrets.opener(cipher(settings), konnect.id),
            # A join tested alone merges the path ends found among the tested nodes.
            path_results=join_merge(ends, outputs) if ends is not None else None,
            budgets=budgets,  # an app step takes its account's tokens from the runners' bucket
            remember=False,  # an Agent under test neither reads nor keeps its conversation's memory
        )
        try:
            outcome = await asyncio.wait_for(run_step(step, ctx), settings.test_timeout_seconds + 5)
        except TimeoutError:
            outcome = None
        finally:
            if calls is not None:
                FLOW_CALLS.reset(calls)
    if outcome is None:
        status, message, output, recorded = (
            "Error",
            f"The test took longer than {settings.test_timeout_seconds:g} s",
            None,
            {},
        )
    else:
        status = activities.SUCCESS if outcome.status == "SUCCESS" else "Error"
        output, recorded = outcome.output, outcome.input
        if status == "Error":
            message = outcome.error or UNABLE
        elif outcome.stop is not None:
            message = outcome.stop
        elif step.kind == "router" and isinstance(output, dict):  # the router reports its chosen paths
            message = "Paths chosen: " + ", ".join(str(name) for name in output.get("paths") or ())
        else:
            message = f"{node.detail.name or 'Step'} tested successfully"
        if outcome.wait_reason:  # the account's rate budget held the request back (docs/rate-budgets.md)
            message = f"{message}. {outcome.wait_reason}"
    activity_id = await run_db(
        session,
        activities.save_activity,  # the canvas under test was stored before the step ran
        konnect_id=konnect.id,
        owner_id=user.id,
        node_id=node.id,
        kind=step.kind,
        app_name=node.detail.name,
        status=status,
        display_message=message,
        input=recorded,
        output=output,
    )
    return TestAndReviewOut(
        test_status="Success" if status == activities.SUCCESS else "Error",
        display_message=message,
        raw_response=output if output is not None else {},
        konnect_id=konnect.id,
        konnect_activity_id=activity_id,
        pass_through_condition=(outcome.stop is None) if outcome is not None and step.kind == "filter" else None,
    )


def _tested_nodes(session: Session, user: User, konnect_id: int) -> tuple[Konnect, dict[str, Any]]:
    """The owner's konnect and its successfully tested nodes (read before the step runs)."""
    konnect = owned_konnect(session, user, konnect_id)
    return konnect, activities.successful(session, konnect_id=konnect.id, owner_id=user.id)


def _store_canvas(session: Session, konnect: Konnect, canvas: dict[str, Any]) -> None:
    konnect.canvas_json = canvas
