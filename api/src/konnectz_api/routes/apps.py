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


def _route(path: str, where: ColumnElement[bool] | None, summary: str) -> None:
    def endpoint(
        user: CurrentUser,
        session: SessionDep,
        search_query: str | None = None,
        page_size: PageSize = 80,
        page_index: PageIndex = 1,
    ) -> AppList:
        return _list(session, where, search_query, page_size, page_index)

    endpoint.__name__ = f"apps_{path.strip('/') or 'list'}"
    router.add_api_route(path, endpoint, methods=["GET"], response_model=AppList, summary=summary)


_route("", None, "Search the app catalogue")
_route("/get_allapps", None, "All apps")
_route("/get_triggers", App.can_trigger.is_(True), "Apps that can start a konnect")
_route("/get_actions", App.can_act.is_(True) & App.is_add_on.is_(False), "Apps with actions")
_route("/add_on_apps", App.is_add_on.is_(True), "The in-house add-ons")
