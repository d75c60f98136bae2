"""A short path for the pages' hot GET routes: the same endpoint functions, without FastAPI's per-request
machinery.

The flow list, the flow history, the folder list, the task logs and the dashboard stats are called
on every page load. Once their queries became cheap (:mod:`konnectz_api.crud.reads`), FastAPI's own
work per request (matching the route through every router, solving the dependency tree, the
exception and body-limit middlewares) was about as large as the route's. :class:`FastReads` sits in
front of the application and serves these GETs itself, **only when nothing is unusual**:

- the route's query parameters are validated by FastAPI's own function for its declared fields
  (``request_params_to_args``): the same types, bounds and patterns;
- the dependencies are built by the same functions (``read_scope``, the settings, the deployer),
  honouring ``app.dependency_overrides``;
- the endpoint function itself runs and its :class:`~starlette.responses.Response` is sent.

Anything else — a parameter that fails validation, a missing or malformed ``Authorization`` header,
any exception from the endpoint (401, 404, 422, a database error) — hands the untouched request to
the full application, which answers it exactly as before (the endpoints are reads: running one again
changes nothing). Routes with a dependency this module does not know are not taken at all, so a new
dependency added to one of them cannot be skipped silently. The OpenAPI document is unchanged: the
routes are still declared (and served) by FastAPI.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.utils import request_params_to_args
from fastapi.routing import APIRoute, APIRouter
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


PROVIDERS: dict[Callable[..., Any], Provider] = {
    deps.read_scope: _reader,
    deps.app_settings: _settings,
    deps.get_deployer: _deployer,
}


@dataclass(frozen=True)
class _Plan:
    route: APIRoute
    injected: tuple[tuple[str, Provider], ...]
    calls: tuple[Callable[..., Any], ...]  # the dependencies, to step aside when a test overrides one


def _plan(route: APIRoute) -> _Plan | None:
    """How to call ``route``'s endpoint without FastAPI, or None when it needs more than query
    parameters and the known dependencies."""
    dependant = route.dependant
    if dependant.path_params or dependant.header_params or dependant.cookie_params or dependant.body_params:
        return None
    injected: list[tuple[str, Provider]] = []
    calls: list[Callable[..., Any]] = []
    for sub in dependant.dependencies:
        provider = PROVIDERS.get(sub.call) if sub.call is not None else None
        if provider is None or sub.call is None or sub.name is None:
            return None
        injected.append((sub.name, provider))
        calls.extend(d.call for d in (sub, *sub.dependencies) if d.call is not None)
    if dependant.request_param_name or dependant.response_param_name or dependant.background_tasks_param_name:
        return None
    return _Plan(route, tuple(injected), tuple(c for c in calls if c is not deps.app_settings))


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
                            "%s is served by the full path: it has a dependency FastReads does not know", route.path
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
        request = Request(scope, receive)
        values, errors = request_params_to_args(plan.route.dependant.query_params, QueryParams(scope["query_string"]))
        if errors:
            return None
        try:
            for name, provider in plan.injected:
                values[name] = await provider(self.fastapi, request)
            response = await plan.route.endpoint(**values)
        except Exception:
            return None
        return response if isinstance(response, Response) else None
