"""One table of the error replies every route can give, and the rule that says which route gives which.

Each route documents the 4xx (and the 503) it can answer in the OpenAPI document, so the contract
tells the truth (schemathesis' ``status_code_conformance`` and ``response_schema_conformance`` run
over the whole document in ``make test``). The statuses follow from what a route is made of, so a
route added later is documented without code of its own:

========  =========================================================================================
400       a JSON body that cannot be parsed (every route with a body)
401       a route that reads a bearer token (signed in, or the runner's scoped token)
403       a route a team member's access level is checked on (``CurrentUser``, ``Reader``, ``AccountAt``)
404       a route with path parameters (an id that does not exist or is not yours)
413       a body larger than ``KONNECTZ_MAX_REQUEST_BYTES`` (every route with a body)
503       the database or NATS is unavailable (every route), with ``Retry-After``
========  =========================================================================================

Statuses a route gives for its own reasons (409, 429, a 400 of its own) are declared on the route.
A reply a route declares with its own model is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.security import HTTPBearer

from konnectz_api.deps import AccountAt, current_user, read_scope

__all__ = ["ERRORS", "ERROR_REPLY", "document_errors", "install_error_schema"]

#: The body of every error reply: ``message`` says why; some carry more keys (``key``, ids).
ERROR_REPLY: dict[str, Any] = {
    "title": "ErrorReply",
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}

_ERROR_REF = {"$ref": "#/components/schemas/ErrorReply"}

ERRORS: dict[int, str] = {
    400: "The request is malformed (a body that is not JSON) or refused; `message` says why",
    401: "Sign in first: no token, or a token that expired or was ended",
    403: "Not allowed: the access level, the plan or the role does not allow this",
    404: "Not found, or not yours",
    413: "The body is larger than the api accepts",
    503: "The database or NATS is unavailable right now; try again after `Retry-After` seconds",
}


def _calls(dependant: Dependant) -> Iterator[Any]:
    for sub in dependant.dependencies:
        yield sub.call
        yield from _calls(sub)


def _statuses(route: APIRoute) -> set[int]:
    calls = list(_calls(route.dependant))
    found = {503}
    if route.body_field is not None:
        found |= {400, 413}
    if any(isinstance(call, HTTPBearer) for call in calls):
        found.add(401)
    if any(call in (current_user, read_scope) or isinstance(call, AccountAt) for call in calls):
        found.add(403)
    if route.dependant.path_params:
        found.add(404)
    return found


def document_errors(router: APIRouter) -> None:
    """Add the table's replies to each route of ``router`` (before it is included in the application)."""
    for route in router.routes:
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        for status in sorted(_statuses(route)):
            route.responses.setdefault(
                status,
                {"description": ERRORS[status], "content": {"application/json": {"schema": _ERROR_REF}}},
            )


def install_error_schema(app: FastAPI) -> None:
    """Put :data:`ERROR_REPLY` into the document's components as ``ErrorReply`` (the replies refer to it)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        document = build()
        document.setdefault("components", {}).setdefault("schemas", {}).setdefault("ErrorReply", ERROR_REPLY)
        return document

    app.openapi = openapi  # type: ignore[method-assign]
