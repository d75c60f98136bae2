"""The app catalogue."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from sqlalchemy import ColumnElement, func, select

from konnectz_api.deps import CurrentUser, SessionDep
from konnectz_api.models import App
from konnectz_api.schemas import AppList, AppOut

router = APIRouter(prefix="/api/v1/apps", tags=["apps"])
PageSize = Annotated[int, Query(ge=1, le=1000)]
PageIndex = Annotated[int, Query(ge=1)]


def _list(
    session: SessionDep, where: ColumnElement[bool] | None, search_query: str | None, page_size: int, page_index: int
) -> AppList:
    stmt = select(App).where(App.status != "Disabled")
    if where is not None:
        stmt = stmt.where(where)
    if search_query and len(search_query.strip()) >= 2:
        stmt = stmt.where(App.name.ilike(f"%{search_query.strip()}%"))
    total = session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
    rows = session.scalars(stmt.order_by(App.name).limit(page_size).offset((page_index - 1) * page_size))
    return AppList(apps=[AppOut.model_validate(a) for a in rows], total_apps=total)


@router.get("", response_model=AppList)
def list_apps(
    user: CurrentUser,
    session: SessionDep,
    search_query: str | None = None,
    page_size: PageSize = 80,
    page_index: PageIndex = 1,
) -> AppList:
    return _list(session, None, search_query, page_size, page_index)


@router.get("/get_allapps", response_model=AppList)
def all_apps(
    user: CurrentUser,
    session: SessionDep,
    search_query: str | None = None,
    page_size: PageSize = 80,
    page_index: PageIndex = 1,
) -> AppList:
    return _list(session, None, search_query, page_size, page_index)


@router.get("/get_triggers", response_model=AppList)
def triggers(
    user: CurrentUser,
    session: SessionDep,
    search_query: str | None = None,
    page_size: PageSize = 80,
    page_index: PageIndex = 1,
) -> AppList:
    return _list(session, App.can_trigger.is_(True), search_query, page_size, page_index)


@router.get("/get_actions", response_model=AppList)
def actions(
    user: CurrentUser,
    session: SessionDep,
    search_query: str | None = None,
    page_size: PageSize = 80,
    page_index: PageIndex = 1,
) -> AppList:
    return _list(session, App.can_act.is_(True) & App.is_add_on.is_(False), search_query, page_size, page_index)


@router.get("/add_on_apps", response_model=AppList)
def add_ons(
    user: CurrentUser,
    session: SessionDep,
    search_query: str | None = None,
    page_size: PageSize = 80,
    page_index: PageIndex = 1,
) -> AppList:
    return _list(session, App.is_add_on.is_(True), search_query, page_size, page_index)
