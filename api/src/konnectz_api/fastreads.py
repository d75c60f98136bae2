"""A short path for the pages' hot GET routes: the same endpoint functions, without FastAPI's per-request
machinery.

The flow list, the flow history, the folder list, the task logs and the dashboard stats are called
on every page load. Once their queries became cheap (:mod:`konnectz_api.crud.reads`), FastAPI's own
work per request (matching the route through every router, solving the dependency tree, the
exception and body-limit middlewares) was about as large as the route's. :class:`FastReads`, a pure
ASGI middleware in front of the application, serves these GETs itself, **only when nothing is
unusual**. It reads each route through public interfaces only (the route's ``path``, ``methods`` and
``endpoint``, and the endpoint's signature), planned once:

- the route's query parameters are validated by a pydantic model made (``pydantic.create_model``)
  from the endpoint's own parameters, whose ``Query(...)`` declarations are pydantic ``FieldInfo``:
  the same types, defaults, bounds and patterns FastAPI validates them with;
- each other parameter must be one of the dependency aliases of :data:`DEPENDENCIES` (``Reader``,
  ``SettingsDep``, ``DeployerDep``), built by the same functions, honouring
  ``app.dependency_overrides``;
- the endpoint function itself runs and its :class:`~starlette.responses.Response` is sent.

Anything else — a parameter that fails validation, a missing or malformed ``Authorization`` header,
any exception from the endpoint (401, 404, 422, a database error) — hands the untouched request to
the full application, which answers it exactly as before (the endpoints are reads: running one again
changes nothing). Routes with a parameter this module does not know (a path, header or body
parameter, another dependency) are not taken at all, so a new dependency added to one of them cannot
be skipped silently. The OpenAPI document is unchanged: the routes are still declared (and served)
by FastAPI.
"""

from __future__ import annotations

import inspect
import logging
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import BackgroundTasks, Depends, FastAPI, Query
from fastapi.routing import APIRoute, APIRouter
from pydantic import BaseModel, ValidationError, create_model
from pydantic.fields import FieldInfo
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from konnectz_api import deps

log = logging.getLogger(__name__)

# The routes served here (paths as declared).
HOT_PATHS = frozenset(
    {
        "/api/v1/konnects",
        "/api/v1/folders/list",
        "/api/v1/dashboard/stats",
        "/api/v1/task_logs/konnects",
        "/api/v1/task_logs/search_konnects",
        "/api/v1/task_logs/logs",
    }
)
Provider = Callable[[FastAPI, Request], Awaitable[Any]]
_QUERY = type(Query())  # what FastAPI's Query(...) declares: a pydantic FieldInfo
_DEPENDS = type(Depends())


async def _settings(app: FastAPI, request: Request) -> Any:
    provider = app.dependency_overrides.get(deps.app_settings, deps.app_settings)
    value = provider()
    return await value if inspect.isawaitable(value) else value


async def _reader(app: FastAPI, request: Request) -> Any:
    creds = await deps._bearer(request)
    if creds is None:
        raise LookupError("no bearer token")  # the full path answers 401
    return await deps.read_scope(request, await _settings(app, request), creds)


async def _deployer(app: FastAPI, request: Request) -> Any:
    return await deps.get_deployer(request)


@dataclass(frozen=True)
class _Dependency:
    provide: Provider
    # The dependency functions it calls (the settings' override is honoured by ``_settings``): the
    # short path steps aside when a test overrides one.
    calls: tuple[Callable[..., Any], ...]


# The dependencies the short path builds, by the alias a route's parameter is annotated with.
DEPENDENCIES: dict[Any, _Dependency] = {
    deps.Reader: _Dependency(_reader, (deps.read_scope, deps._bearer)),
    deps.SettingsDep: _Dependency(_settings, ()),
    deps.DeployerDep: _Dependency(_deployer, (deps.get_deployer,)),
}


@dataclass(frozen=True)
class _Plan:
    route: APIRoute
    query: type[BaseModel]
    injected: tuple[tuple[str, Provider], ...]
    calls: tuple[Callable[..., Any], ...]  # the dependencies, to step aside when a test overrides one


def _is_query(annotation: Any) -> bool:
    """A plain type, or one annotated with ``Query(...)`` and pydantic's validators, not with another
    parameter's declaration (``Path``, ``Header``, ``Body``...: pydantic ``FieldInfo`` too) nor ``Depends``."""
    if typing.get_origin(annotation) is not Annotated:
        return True
    return not any(
        isinstance(meta, _DEPENDS) or (isinstance(meta, FieldInfo) and not isinstance(meta, _QUERY))
        for meta in annotation.__metadata__
    )


def _plan(route: APIRoute) -> _Plan | None:
    """How to call ``route``'s endpoint without FastAPI, or None when it needs more than query
    parameters and the known dependencies."""
    endpoint = route.endpoint
    if "{" in route.path or not inspect.iscoroutinefunction(endpoint):
        return None
    hints = typing.get_type_hints(endpoint, include_extras=True)
    fields: dict[str, Any] = {}
    injected: list[tuple[str, Provider]] = []
    calls: list[Callable[..., Any]] = []
    for name, param in inspect.signature(endpoint).parameters.items():
        annotation = hints.get(name, param.annotation)
        dependency = next((d for alias, d in DEPENDENCIES.items() if annotation == alias), None)
        if dependency is not None:
            injected.append((name, dependency.provide))
            calls.extend(dependency.calls)
        elif param.kind is param.KEYWORD_ONLY or param.kind is param.POSITIONAL_OR_KEYWORD:
            if not _is_query(annotation) or isinstance(param.default, _QUERY) or _is_special(annotation):
                return None
            fields[name] = (annotation, ... if param.default is param.empty else param.default)
        else:
            return None
    try:
        query = create_model(f"{getattr(endpoint, '__name__', 'route')}_query", **fields)
    except Exception:  # a parameter pydantic cannot validate from a query string: FastAPI's own job
        return None
    return _Plan(route, query, tuple(injected), tuple(calls))


def _is_special(annotation: Any) -> bool:
    """A parameter FastAPI fills from the connection itself (the request, the response, background tasks)."""
    return inspect.isclass(annotation) and issubclass(annotation, (Request, Response, BackgroundTasks))


class FastReads:
    """ASGI middleware serving the hot GET routes of ``app`` directly (see the module's doc)."""

    def __init__(self, inner: ASGIApp, *, fastapi_app: FastAPI, routers: Sequence[APIRouter]) -> None:
        self.inner = inner
        self.fastapi = fastapi_app
        self.routers = routers
        self._plans: dict[str, _Plan] | None = None

    def plans(self) -> dict[str, _Plan]:
        """The hot routes of ``routers`` (included in the application without dependencies of their own)."""
        if self._plans is None:
            plans = {}
            routes = [r for router in self.routers if not router.dependencies for r in router.routes]
            for route in routes:
                if isinstance(route, APIRoute) and route.path in HOT_PATHS and "GET" in (route.methods or ()):
                    plan = _plan(route)
                    if plan is None:
                        log.warning(
                            "%s is served by the full path: it has a parameter FastReads does not know", route.path
                        )
                    else:
                        plans[route.path] = plan
            self._plans = plans
        return self._plans

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope.get("root_path", "") == "":
            plan = self.plans().get(scope["path"])
            if plan is not None:
                response = await self._serve(plan, scope, receive)
                if response is not None:
                    await response(scope, receive, send)
                    return
        await self.inner(scope, receive, send)

    async def _serve(self, plan: _Plan, scope: Scope, receive: Receive) -> Response | None:
        overrides = self.fastapi.dependency_overrides
        if overrides and any(call in overrides for call in plan.calls):
            return None
        try:
            values = dict(plan.query.model_validate(dict(QueryParams(scope["query_string"]))))
        except ValidationError:
            return None
        request = Request(scope, receive)
        try:
            for name, provider in plan.injected:
                values[name] = await provider(self.fastapi, request)
            response = await plan.route.endpoint(**values)
        except Exception:
            return None
        return response if isinstance(response, Response) else None
