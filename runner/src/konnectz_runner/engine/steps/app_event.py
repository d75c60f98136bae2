"""Runs the ``app_event`` step; its config and constants are :mod:`konnectz_contracts.steps.app_event`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

import httpx

from konnectz_contracts.broker_token import ENV_KEY, ENV_TOKEN, ENV_URL, token_for
from konnectz_contracts.errors import HttpFailed, StepError
from konnectz_contracts.manifest import App, Event, Polling
from konnectz_contracts.refs import resolve_value
from konnectz_contracts.steps.app_event import AppEventStep
from konnectz_contracts.triggers.polling import Cursor, PollingTrigger, since_value
from konnectz_runner.apps import (
    AppRequest,
    Budget,
    Budgets,
    Catalogue,
    LazyCatalogue,
    LocalSpacing,
    NetGuard,
    build_event_request,
    dig,
    hook_error,
    is_expired,
    items_at,
    outbound,
    picked,
    rows_as_objects,
    secret_values,
    wait_reason,
)
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = [
    "MAX_POLL_BYTES",
    "CredentialSource",
    "account_budget",
    "app_items",
    "broker_credentials",
    "call_event",
    "catalogue",
    "credential_source",
    "default_catalogue",
    "new_items",
    "record_waits",
    "remember_account",
    "run",
    "send_paced",
    "set_catalogue",
    "set_credential_source",
]


IDEMPOTENT = frozenset({"GET", "PUT", "DELETE"})
#: A shorter wait for the rate budget is not worth a line in the task log.
MIN_REPORTED_WAIT = 0.05
BACKOFF_SECONDS = 0.5
#: The largest reply a polling trigger's request may read.
MAX_POLL_BYTES = 5 * 1024 * 1024


# (account_id, konnect_id, owner_id, refresh) -> credentials
CredentialSource = Callable[[int, int, int, bool], Awaitable[dict[str, Any]]]


@lru_cache(maxsize=1)
def default_catalogue() -> LazyCatalogue:
    """The catalogue of this runner: curated apps, generated ones read from the bundle on first use."""
    return LazyCatalogue()


_catalogue: Callable[[], Catalogue | LazyCatalogue] = default_catalogue
_credential_source: CredentialSource | None = None
# What the credential broker said of an account besides its credentials: (rate override, account name).
_accounts: dict[int, tuple[float | None, str | None]] = {}
# Spacing within this process when the step has no shared budgets (Test & Review, tests without NATS).
_local = LocalSpacing()


def set_catalogue(loader: Callable[[], Catalogue | LazyCatalogue]) -> None:
    """Where apps come from (tests add their own manifests)."""
    global _catalogue
    _catalogue = loader


def set_credential_source(source: CredentialSource | None) -> None:
    global _credential_source
    _credential_source = source


def catalogue() -> Catalogue | LazyCatalogue:
    """The catalogue steps and pollers read apps from."""
    return _catalogue()


def credential_source() -> CredentialSource:
    """Where credentials come from: the one set by :func:`set_credential_source`, else the broker."""
    return _credential_source or broker_credentials


async def broker_credentials(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
    """Ask the api for a fresh credential of an account (``KONNECTZ_CREDENTIALS_URL``)."""
    url = os.environ.get(ENV_URL)
    token = token_for(konnect_id)
    if not url or not token:
        raise StepError(
            f"No credential broker configured ({ENV_URL} and {ENV_TOKEN} or {ENV_KEY} must be set for this runner)"
        )
    async with httpx.AsyncClient(timeout=20) as http:
        response = await http.post(
            url,
            json={"account_id": account_id, "konnect_id": konnect_id, "refresh": refresh},
            headers={"Authorization": f"Bearer {token}"},
        )
    if response.status_code != 200:
        raise StepError(f"The account could not be used (HTTP {response.status_code} from the credential broker)")
    reply = response.json()
    credentials = reply.get("credentials")
    if not isinstance(credentials, dict):
        raise StepError("The credential broker answered without credentials")
    rps, name = reply.get("rate_limit_rps"), reply.get("account_name")
    remember_account(
        account_id,
        float(rps) if isinstance(rps, int | float) and not isinstance(rps, bool) and rps > 0 else None,
        name if isinstance(name, str) else None,
    )
    return credentials


def remember_account(account_id: int, rate_limit_rps: float | None, name: str | None) -> None:
    """Record what the broker said of an account: its owner's rate override and its name (for the log)."""
    if len(_accounts) > 100_000:
        _accounts.clear()
    _accounts[account_id] = (rate_limit_rps, name)


def account_budget(app: App, account_id: int | None) -> Budget | None:
    """The rate budget of ``account_id`` for ``app``: the owner's override, else the manifest's rate."""
    if account_id is None:
        return None
    override, _name = _accounts.get(account_id, (None, None))
    rate = override or app.rate_limit.requests_per_second
    if not rate:
        return None
    return Budget(account_id, rate, app.rate_limit.burst, "override" if override else "app default")


def _retry_after(response: httpx.Response, cap: float, attempt: int) -> float:
    asked = outbound.retry_after_seconds(response)
    delay = BACKOFF_SECONDS * 2**attempt if asked is None else asked
    return max(0.0, min(delay, cap))


async def _pace(ctx: StepContext, app: App, account_id: int | None, waits: list[float] | None) -> None:
    """Take a token from the account's rate budget (shared by every runner process: budgets.py)."""
    budget = account_budget(app, account_id)
    if budget is None and account_id is None and app.rate_limit.requests_per_second:
        # An app without accounts: its requests are spaced within this process, as before budgets.
        budget = Budget(-app.id, app.rate_limit.requests_per_second, app.rate_limit.burst)
        waited = _local.reserve(budget)
        if waited > 0:
            await asyncio.sleep(waited)
        return
    if budget is None:
        return
    if ctx.budgets is not None:
        waited = (await ctx.budgets.take(budget)).waited
    else:
        waited = _local.reserve(budget)
        if waited > 0:
            await asyncio.sleep(waited)
    if waits is not None and waited > 0:
        waits.append(waited)


async def _send(
    ctx: StepContext, app: App, request: AppRequest, account_id: int | None, waits: list[float] | None = None
) -> tuple[httpx.Response, bytes]:
    limits = app.rate_limit
    for attempt in range(limits.max_retries + 1):
        await _pace(ctx, app, account_id, waits)
        built = request.to_httpx(ctx.http)
        response, raw = await outbound.send(
            ctx.http, ctx.guard, built, ctx.max_response_bytes, secret_headers=request.secret_headers
        )
        retry = response.status_code in limits.retry_on and (
            response.status_code == 429 or request.method in IDEMPOTENT
        )
        if not retry or attempt == limits.max_retries:
            return response, raw
        await asyncio.sleep(_retry_after(response, limits.max_retry_after_seconds, attempt))
    raise AssertionError("unreachable")


async def send_paced(
    ctx: StepContext, app: App, request: AppRequest, account_id: int | None, waits: list[float] | None = None
) -> tuple[httpx.Response, bytes]:
    """Send a request of ``app`` as its events are sent (a step kind's own request, e.g. Ask AI's): a token
    of the account's rate budget before each attempt, 429 (and 5xx of idempotent methods) retried up to the
    app's ``rate_limit.max_retries``, honouring ``Retry-After``; the last reply is returned."""
    return await _send(ctx, app, request, account_id, waits)


def record_waits(outcome: Outcome, app: App | None, account_id: int | None, waits: list[float]) -> Outcome:
    """Record on ``outcome`` how long the step waited for its account's rate budget (as app steps do)."""
    return _waited(outcome, app, account_id, waits)


def _keyed(ctx: StepContext, event: Event, request: AppRequest) -> AppRequest:
    """An action of a step with retries sends the step's Idempotency-Key (the same on every attempt),
    unless the app's request sets its own."""
    if ctx.idempotency_key is not None and event.kind == "action":
        if not any(name.lower() == "idempotency-key" for name in request.headers):
            request.headers["Idempotency-Key"] = ctx.idempotency_key
    return request


def _page_params(event: Event, page: int, cursor: str | None) -> list[tuple[str, str]]:
    p = event.pagination
    params: list[tuple[str, str]] = []
    if p.size_param:
        params.append((p.size_param, str(p.page_size)))
    if p.style == "page" and p.page_param:
        params.append((p.page_param, str(p.first_page + page)))
    elif p.style == "offset" and p.page_param:
        params.append((p.page_param, str(page * p.page_size)))
    elif p.style == "cursor" and p.cursor_param and cursor:
        params.append((p.cursor_param, cursor))
    return params


async def call_event(
    ctx: StepContext,
    app: App,
    event: Event,
    values: dict[str, Any],
    credentials: dict[str, Any],
    *,
    account_id: int | None,
    refresh: Callable[[], Awaitable[dict[str, Any]]] | None,
    extra_params: list[tuple[str, str]] | None = None,
    waits: list[float] | None = None,
) -> tuple[Any, list[dict[str, Any]]]:
    """The reply body (actions) or all items (searches/triggers), and what the log may show.

    ``extra_params`` go into every page's query (a polling trigger's ``since`` parameter); the seconds
    waited for the account's rate budget are appended to ``waits``."""
    hooks = [*app.hooks, *event.hooks]
    pages = event.pagination.max_pages if event.kind != "action" and event.pagination.style != "none" else 1
    items: list[Any] = []
    recorded: list[dict[str, Any]] = []
    cursor: str | None = None
    next_url: str | None = None
    body: Any = None
    for page in range(pages):
        extra = [*(extra_params or ()), *(_page_params(event, page, cursor) if pages > 1 else ())] or None
        request = _keyed(ctx, event, build_event_request(app, event, values, credentials, extra_params=extra))
        if next_url is not None:
            _follow(request, next_url)
        response, raw = await _send(ctx, app, request, account_id, waits)
        body = outbound.parse_body(response, raw)
        if refresh is not None and is_expired(app.auth.expiry, response.status_code, body):
            credentials = await refresh()
            refresh = None
            request = _keyed(ctx, event, build_event_request(app, event, values, credentials, extra_params=extra))
            response, raw = await _send(ctx, app, request, account_id, waits)
            body = outbound.parse_body(response, raw)
        recorded.append({**request.recorded(), "status": response.status_code})
        secrets = secret_values(app, credentials)
        if response.status_code >= 400:
            text = raw.decode(response.encoding or "utf-8", errors="replace")[: outbound.ERROR_BODY_CHARS]
            for secret in secrets:
                text = text.replace(secret, outbound.REDACTED)
            raise HttpFailed(
                f"HTTP {response.status_code} from {app.name} ({event.label}): {text}",
                response.status_code,
                outbound.retry_after_seconds(response),
            )
        problem = hook_error(hooks, body)
        if problem:
            raise StepError(problem)
        if event.kind == "action":
            return body, recorded
        found = items_at(picked(event.output, body, values), event.output.items_path)
        if "sheet_rows_as_objects" in hooks:
            found = rows_as_objects(found)
        items.extend(found)
        if event.pagination.style == "cursor":
            next_cursor = dig(body, event.pagination.next_cursor_path)
            if not next_cursor:
                break
            cursor = str(next_cursor)
        elif event.pagination.style == "link_header":
            next_url = _next_link(response, request.url)
            if next_url is None:
                break
        elif len(found) < event.pagination.page_size:
            break
    return items, recorded


def _next_link(response: httpx.Response, first_url: str) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header (Shopify, GitHub), when it is on the request's own origin:
    the next request carries the account's credentials, so another host is never followed."""
    url = (response.links.get("next") or {}).get("url")
    if not url:
        return None
    try:
        target, origin = httpx.URL(url), httpx.URL(first_url)
    except httpx.InvalidURL:
        return None
    if (target.scheme, target.host, target.port) != (origin.scheme, origin.host, origin.port):
        return None
    return url


def _follow(request: AppRequest, next_url: str) -> None:
    """Send ``request`` to a ``Link`` header's next URL, which carries the page token and the filters the
    API keeps (Shopify refuses other filters beside ``page_info``): only the credential parameters stay."""
    target = httpx.URL(next_url)
    request.url = str(target.copy_with(query=None))
    secret = set(request.secret_params)
    kept = [(k, v) for k, v in request.params if k in secret]
    request.params = [*((k, v) for k, v in target.params.multi_items() if k not in secret), *kept]


def _scalar(value: Any) -> bool:
    return value is not None and value != "" and not isinstance(value, dict | list)


def new_items(items: list[Any], cursor: dict[str, Any] | None, strategy: Polling) -> tuple[list[Any], dict[str, Any]]:
    """The items a poll has not seen yet, and the next cursor.

    The first poll (no cursor) only records what exists. Dedupe ``id`` remembers the last
    ``max_seen`` ids; dedupe ``timestamp`` remembers the newest timestamp. Items without an id (or
    timestamp) are skipped: they could not be recognised on the next poll.
    """
    if strategy.dedupe == "timestamp":
        stamped = [i for i in items if _scalar(dig(i, strategy.timestamp_path))]
        stamps = [str(dig(i, strategy.timestamp_path)) for i in stamped]
        newest = max([*stamps, *([cursor["since"]] if cursor and cursor.get("since") else [])], default=None)
        if cursor is None:
            return [], {"since": newest}
        since = cursor.get("since")
        fresh = [i for i in stamped if since is None or str(dig(i, strategy.timestamp_path)) > since]
        return fresh, {"since": newest}
    # An item without an id cannot be told apart from the next poll's: it never starts a run.
    items = [i for i in items if _scalar(dig(i, strategy.id_path))]
    ids = [str(dig(i, strategy.id_path)) for i in items]
    if cursor is None:
        return [], {"seen": ids[: strategy.max_seen]}
    seen = set(cursor.get("seen", []))
    fresh = [i for i in items if str(dig(i, strategy.id_path)) not in seen]
    remembered = [*[str(dig(i, strategy.id_path)) for i in fresh], *cursor.get("seen", [])]
    return fresh, {"seen": list(dict.fromkeys(remembered))[: strategy.max_seen]}


async def run(step: AppEventStep, ctx: StepContext) -> Outcome:
    """Run one manifest event; a failure is an ERROR outcome, never an exception."""
    warnings: list[str] = []
    values = {f.key: resolve_value(f.value, ctx.outputs, warnings) for f in step.fields}
    recorded: dict[str, Any] = {"app_id": step.app_id, "event": step.event, "fields": values}
    waits: list[float] = []
    app: App | None = None
    try:
        app = catalogue().get(step.app_id)
        event = app.event(step.event) if app is not None else None
        if app is None or event is None:
            raise StepError(f"Unknown app event {step.app_id}/{step.event}")
        credentials: dict[str, Any] = {}
        refresh: Callable[[], Awaitable[dict[str, Any]]] | None = None
        if app.needs_account:
            source = credential_source()
            if step.account_id is None:
                raise StepError(f"Choose a {app.name} account for this step")
            account_id = step.account_id
            credentials = await source(account_id, ctx.konnect_id, ctx.owner_id, False)
            if app.auth.type == "oauth2":

                async def refresh() -> dict[str, Any]:
                    return await source(account_id, ctx.konnect_id, ctx.owner_id, True)

        result, requests = await call_event(
            ctx, app, event, values, credentials, account_id=step.account_id, refresh=refresh, waits=waits
        )
        recorded["requests"] = requests
    except StepError as exc:
        failed = Outcome.from_error(exc, input={**recorded, **({"warnings": warnings} if warnings else {})})
        return _waited(failed, app, step.account_id, waits)
    if warnings:
        recorded["warnings"] = warnings
    output = result if event.kind == "action" else {"items": result, "count": len(result)}
    return _waited(Outcome(status="SUCCESS", output=output, input=recorded), app, step.account_id, waits)


def _waited(outcome: Outcome, app: App | None, account_id: int | None, waits: list[float]) -> Outcome:
    """Record on the outcome how long the step waited for its account's rate budget (none: unchanged)."""
    total = sum(waits)
    if app is None or total < MIN_REPORTED_WAIT:
        return outcome
    budget = account_budget(app, account_id)
    if budget is None:
        return outcome
    outcome.waited_seconds = round(total, 3)
    outcome.wait_reason = wait_reason(app.name, _accounts.get(budget.account_id, (None, None))[1], budget, total)
    return outcome


async def app_items(
    trigger: PollingTrigger,
    cursor: Cursor,
    *,
    konnect_id: int,
    owner_id: int,
    timezone: str = "UTC",
    http: httpx.AsyncClient,
    guard: NetGuard,
    max_bytes: int = MAX_POLL_BYTES,
    credential_source: CredentialSource | None = None,
    app: App | None = None,
    budgets: Budgets | None = None,
) -> list[Any]:
    """The items of a catalogue app's trigger event, read through the generic HTTP step.

    Credentials come from ``credential_source`` (the api's Test & Review reads its own database), else
    from the step's credential source: the api's broker with this konnect's token. ``app``: the
    manifest when the caller has it (the api's catalogue), else the runner's catalogue is read."""
    app = app or catalogue().get(trigger.app_id or 0)
    event = app.event(trigger.event) if app is not None else None
    if app is None or event is None or event.operation is None:
        raise StepError(f"Unknown app event {trigger.app_id}/{trigger.event}")
    values: dict[str, Any] = {f.key: f.value for f in trigger.event_fields}
    extra: list[tuple[str, str]] = []
    since = since_value(trigger, cursor)
    if since is not None and trigger.since_param:
        if event.field(trigger.since_param) is not None:
            values[trigger.since_param] = since
        else:
            extra.append((trigger.since_param, since))
    credentials: dict[str, Any] = {}
    refresh = None
    account_id = trigger.account_id
    if app.needs_account:
        if account_id is None:
            raise StepError(f"Choose a {app.name} account for this trigger")
        source = credential_source or _credential_source or broker_credentials  # else as credential_source()
        credentials = await source(account_id, konnect_id, owner_id, False)
        if app.auth.type == "oauth2":

            async def refresh() -> dict[str, Any]:
                return await source(account_id, konnect_id, owner_id, True)

    ctx = StepContext(
        outputs={},
        http=http,
        guard=guard,
        run_id=f"poll-{konnect_id}",
        konnect_id=konnect_id,
        owner_id=owner_id,
        timezone=timezone,
        max_response_bytes=max_bytes,
        budgets=budgets,
    )
    items, _ = await call_event(
        ctx, app, event, values, credentials, account_id=account_id, refresh=refresh, extra_params=extra or None
    )
    return list(items)
