"""The app catalogue (served from manifests) and the configuration of app events."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import Response
from starlette.requests import Request

from konnectz_api.app_icons import bundled_icon, icon_path, monogram_svg
from konnectz_api.catalogue import AppIndex, AppSummary, Listing, get_index
from konnectz_api.crud import app_accounts
from konnectz_api.db import run_db
from konnectz_api.deps import CurrentUser, SessionDep, SettingsDep
from konnectz_api.errors import BadRequest, NotFound
from konnectz_api.schemas import (
    AppEventList,
    AppEventOut,
    AppList,
    AppOut,
    ConfigOptions,
    EventConfigList,
    EventConfigOut,
    FetchedFields,
    OptionOut,
)
from konnectz_api.services import mcp_tools
from konnectz_api.services.app_calls import AppCallError, app_client, call_app
from konnectz_api.services.credential_broker import call_with_account
from konnectz_contracts.manifest import App, DynamicOptions, Event, EventField
from konnectz_runner.apps import build_event_request, dig, items_at, picked

router = APIRouter(prefix="/api/v1/apps", tags=["apps"])

MAX_PAGE_SIZE = 1000
MAX_OPTIONS = 500
NO_EVENTS = "Couldn't find any events linked with this app! Please give it another try."
NO_DETAILS = "Oops! We couldn't fetch app details. Please provide the appropriate inputs."
NEEDS_ACCOUNT = "App events linked with this app couldn't be found! Please Authorize it."
#: The step kind of the MCP Server app's search event: its items are the server's tools, listed by an MCP
#: client (:mod:`konnectz_api.services.mcp_tools`), not an HTTP request.
MCP_LIST_TOOLS = "mcp_list_tools"

IndexDep = Annotated[AppIndex, Depends(get_index)]
PageSize = Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE, description="80 at first, +20 per scroll, at most 1000")]
PageIndex = Annotated[int, Query(ge=1, le=1_000_000)]
SearchQuery = Annotated[
    str | None, Query(max_length=100, description="Matched literally in app names, from 2 characters")
]
AppId = Annotated[int, Path(ge=1, lt=2**31)]
EventKey = Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9_.-]{0,99}$")]
FieldKey = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_$@][A-Za-z0-9_.$@\[\]-]*$")]
Side = Literal["left", "right"]
AccountId = Annotated[int | None, Query(ge=1, lt=2**63)]


def _app_out(app: AppSummary, counts: dict[int, int]) -> AppOut:
    return AppOut(
        id=app.id,
        name=app.name,
        image_url=icon_path(app.id),
        status=app.status,
        account_count=counts.get(app.id, 0),
        provider=app.key,
        app_type=app.app_type,
        auth_type=app.auth_type,
        categories=app.categories,
    )


def _route(path: str, listing: Listing, summary: str) -> None:
    def endpoint(
        user: CurrentUser,
        session: SessionDep,
        index: IndexDep,
        search_query: SearchQuery = None,
        page_size: PageSize = 80,
        page_index: PageIndex = 1,
    ) -> AppList:
        if search_query is not None and "\x00" in search_query:
            raise BadRequest("search_query must not contain NUL characters")
        apps, total = index.search(listing, search_query, limit=page_size, offset=(page_index - 1) * page_size)
        counts = app_accounts.counts_by_app(session, owner_id=user.id, app_ids=[a.id for a in apps])
        return AppList(apps=[_app_out(a, counts) for a in apps], total_apps=total)

    endpoint.__name__ = f"apps_{path.strip('/') or 'list'}"
    router.add_api_route(path, endpoint, methods=["GET"], response_model=AppList, summary=summary)


_route("", "all", "Search the app catalogue")
_route("/get_allapps", "all", "All apps")
_route("/get_triggers", "triggers", "Apps that can start a konnect")
_route("/get_actions", "actions", "Apps with actions or searches")
_route("/add_on_apps", "add_ons", "The in-house add-ons")


_ICON_HEADERS = {
    "Cache-Control": "public, max-age=86400",
    "X-Content-Type-Options": "nosniff",
    # An SVG opened on its own runs nothing and loads nothing.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
}


@router.get(
    "/{app_id}/icon",
    response_class=Response,
    summary="An app's icon: the catalogue's bundled image, else a monogram SVG (no sign-in: <img> sends no token)",
    responses={200: {"content": {"image/svg+xml": {}, "image/png": {}}}, 404: {"description": "No such app"}},
)
def app_icon(index: IndexDep, app_id: AppId) -> Response:
    app = index.summary(app_id)
    if app is None:
        raise NotFound(f"App {app_id} not found")
    bundled = bundled_icon(index.root, app.key) if index.root is not None else None
    if bundled is not None:
        path, media_type = bundled
        return Response(path.read_bytes(), media_type=media_type, headers=_ICON_HEADERS)
    return Response(monogram_svg(app.key, app.name), media_type="image/svg+xml", headers=_ICON_HEADERS)


def _app(index: AppIndex, app_id: int) -> App:
    app = index.get(app_id)
    if app is None:
        raise NotFound(f"App {app_id} not found")
    return app


def _event(app: App, key: str, side: Side | None = None) -> Event:
    event = app.event(key)
    if event is None or (side is not None and (event.kind == "trigger") != (side == "left")):
        raise NotFound(NO_EVENTS)
    return event


@router.get("/{app_id}/app_events", response_model=AppEventList, summary="The events of an app")
def app_events(user: CurrentUser, index: IndexDep, app_id: AppId, side: Side | None = None) -> AppEventList:
    app = _app(index, app_id)
    events = [
        AppEventOut(id=e.key, name=e.label, kind=e.kind, side="left" if e.kind == "trigger" else "right", help=e.help)
        for e in app.events
        if (side is None or (e.kind == "trigger") == (side == "left")) and e.step_kind != MCP_LIST_TOOLS
    ]
    return AppEventList(app_events=events)


def _config(f: EventField) -> EventConfigOut:
    selectable = bool(f.options) or f.dynamic is not None
    return EventConfigOut(
        id=f.key,
        config_key=f.key,
        title=f.label,
        label=f.label,
        key_value_type=f.type,
        type="select" if selectable else "text",
        config_key_required=f.required,
        sequence=f.sequence,
        help=f.help,
        default=f.default,
        options=[OptionOut(id=o.value, name=o.label) for o in f.options],
        dynamic=f.dynamic is not None,
        depends_on=list(f.dynamic.depends_on) if f.dynamic else [],
    )


@router.get(
    "/{app_id}/app_events/{event_key}/event_config/{side}",
    response_model=EventConfigList,
    summary="The configuration fields of an event, in sequence",
)
def event_config(
    user: CurrentUser, index: IndexDep, app_id: AppId, event_key: EventKey, side: Side, app_account_id: AccountId = None
) -> EventConfigList:
    event = _event(_app(index, app_id), event_key, side)
    fields = sorted(event.fields, key=lambda f: (f.sequence == 0, f.sequence))
    return EventConfigList(
        app_event_configurations=[_config(f) for f in fields], fetch_fields=event.fields_from is not None
    )


_RESERVED = {"app_account_id", "prevSequence", "selectedValue"}


def _selected(request: Request) -> dict[str, str]:
    values = {k: v for k, v in request.query_params.items() if k not in _RESERVED}
    if any("\x00" in v or len(v) > 2000 for v in values.values()) or len(values) > 100:
        raise BadRequest(NO_DETAILS)
    return values


async def _live_items(
    session: SessionDep,
    settings: SettingsDep,
    user: CurrentUser,
    app: App,
    source: DynamicOptions,
    values: dict[str, Any],
    account_id: int | None,
) -> list[Any]:
    if app.needs_account:
        if account_id is None:
            raise BadRequest(NEEDS_ACCOUNT)
        account = await run_db(session, app_accounts.get_account, owner_id=user.id, account_id=account_id)
        if account is None or account.app_id != app.id:
            raise NotFound("Account not found")
    else:
        account = None
    event = app.event(source.event)
    assert event is not None  # the manifest model checks it
    try:
        async with app_client(settings) as (http, guard):
            if account is None:
                reply = await call_app(
                    http, guard, build_event_request(app, event, values, {}), secrets=[], hooks=app.hooks
                )
            else:
                reply = await call_with_account(
                    session,
                    http=http,
                    guard=guard,
                    settings=settings,
                    account=account,
                    app=app,
                    build=lambda creds: build_event_request(app, event, values, creds),
                    hooks=[*app.hooks, *event.hooks],
                )
    except AppCallError as exc:
        raise BadRequest(NO_DETAILS, details=str(exc)) from exc
    path = source.items_path if source.items_path is not None else event.output.items_path
    return items_at(picked(event.output, reply.body, values), path)[:MAX_OPTIONS]


def _is_mcp(app: App, source: DynamicOptions) -> bool:
    """Whether ``source`` is the MCP Server app's tool list (listed by an MCP client)."""
    event = app.event(source.event)
    return event is not None and event.step_kind == MCP_LIST_TOOLS


def _options(items: list[Any], source: DynamicOptions) -> list[OptionOut]:
    options = []
    for item in items:
        value, label = dig(item, source.value_path), dig(item, source.label_path)
        if value is not None:
            options.append(OptionOut(id=str(value), name=str(label if label is not None else value)))
    return options


@router.get(
    "/{app_id}/app_events/{event_key}/event_config/{side}/{config_key}/details",
    response_model=ConfigOptions,
    summary="Options of one field, fetched live through the account when they are dynamic",
    description="Query: app_account_id, prevSequence, and the values chosen so far (field key = value).",
)
async def config_details(
    request: Request,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    index: IndexDep,
    app_id: AppId,
    event_key: EventKey,
    side: Side,
    config_key: FieldKey,
    app_account_id: AccountId = None,
    prevSequence: Annotated[int | None, Query(ge=0, le=1000)] = None,
) -> ConfigOptions:
    app = _app(index, app_id)
    event = _event(app, event_key, side)
    field = event.field(config_key)
    if field is None:
        raise NotFound(NO_DETAILS)
    if field.dynamic is None:
        return ConfigOptions(config_key=field.key, options=[OptionOut(id=o.value, name=o.label) for o in field.options])
    if _is_mcp(app, field.dynamic):
        listed = await mcp_tools.account_tools(session, settings, index, user, app_account_id)
        return ConfigOptions(config_key=field.key, options=mcp_tools.tool_options(listed))
    chosen = _selected(request)
    values = {dep: chosen[dep] for dep in field.dynamic.depends_on if dep in chosen}
    missing = [dep for dep in field.dynamic.depends_on if dep not in values]
    if missing:
        raise BadRequest(NO_DETAILS, details=f"choose {', '.join(missing)} first")
    items = await _live_items(session, settings, user, app, field.dynamic, values, app_account_id)
    return ConfigOptions(config_key=field.key, options=_options(items, field.dynamic))


@router.get(
    "/{app_id}/app_events/{event_key}/event_config/{side}/{config_key}/fetch-fields",
    response_model=FetchedFields,
    summary="Fields an event lists live (e.g. a sheet's columns) once its sequence is chosen",
)
async def fetch_fields(
    request: Request,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    index: IndexDep,
    app_id: AppId,
    event_key: EventKey,
    side: Side,
    config_key: FieldKey,
    app_account_id: AccountId = None,
    selectedValue: Annotated[str | None, Query(max_length=2000)] = None,
) -> FetchedFields:
    app = _app(index, app_id)
    event = _event(app, event_key, side)
    if event.fields_from is None:
        return FetchedFields(fields=[])
    chosen = _selected(request)
    if selectedValue is not None:
        chosen[config_key] = selectedValue
    if _is_mcp(app, event.fields_from):
        listed = await mcp_tools.account_tools(session, settings, index, user, app_account_id)
        return FetchedFields(fields=mcp_tools.argument_fields(listed, chosen.get("tool", "")))
    values = {dep: chosen[dep] for dep in event.fields_from.depends_on if dep in chosen}
    items = await _live_items(session, settings, user, app, event.fields_from, values, app_account_id)
    fields = [
        EventConfigOut(
            id=o.id,
            config_key=o.id,
            title=o.name,
            label=o.name,
            key_value_type="string",
            type="text",
            config_key_required=False,
            sequence=0,
        )
        for o in _options(items, event.fields_from)
    ]
    return FetchedFields(fields=fields)
