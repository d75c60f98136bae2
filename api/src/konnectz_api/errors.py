"""Domain errors and their single mapping to HTTP replies ``{"message": ..., ...}``.

ApiError
 ├── BadRequest        400
 ├── Unauthorized      401
 ├── Forbidden         403
 ├── NotFound          404
 ├── Conflict          409
 ├── Unprocessable     422
 └── TooManyRequests   429 (optional headers, e.g. Retry-After)

A database outage (the sync engine's or the async read pool's connection errors) is a 503 with
``Retry-After``, one warning line, no traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from psycopg_pool import PoolTimeout
from sqlalchemy.exc import DataError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as SATimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response

log = logging.getLogger(__name__)
DATABASE_DOWN = "The database is unavailable right now. Please try again shortly."
DATABASE_RETRY_AFTER_SECONDS = 5
UNSTORABLE = "The request contains a value that cannot be stored (for example a NUL character in a text)."


class ApiError(Exception):
    status_code = 400

    def __init__(self, message: str, *, headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra
        self.headers = headers


class BadRequest(ApiError):
    status_code = 400


class Unauthorized(ApiError):
    status_code = 401


class Forbidden(ApiError):
    status_code = 403


class NotFound(ApiError):
    status_code = 404


class Conflict(ApiError):
    status_code = 409


class PayloadTooLarge(ApiError):
    status_code = 413


class Unprocessable(ApiError):
    status_code = 422


class TooManyRequests(ApiError):
    status_code = 429


#: Keys a route's own 422 carries, added to its validation errors too (by route path), so the route
#: answers one documented shape: ``test_and_review``'s ``test_status``.
VALIDATION_EXTRAS: dict[str, Callable[[str], dict[str, Any]]] = {}


def _describe(errors: list[Any]) -> str:
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path"))
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts) or "Invalid request"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"message": exc.message, **exc.extra}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
        message = _describe(errors)
        extra = VALIDATION_EXTRAS.get(getattr(request.scope.get("route"), "path", ""))
        return JSONResponse(
            {"message": message, **(extra(message) if extra else {}), "detail": errors}, status_code=422
        )

    async def _database_down(request: Request, exc: Exception) -> JSONResponse:
        log.warning("%s %s: the database is unavailable (%s)", request.method, request.url.path, type(exc).__name__)
        return JSONResponse(
            {"message": DATABASE_DOWN},
            status_code=503,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS)},
        )

    # The sync engine's errors (SQLAlchemy wraps psycopg's) and the async read pool's (psycopg's own,
    # and a pool that found no connection in time): an outage is a 503, never a 500.
    for outage in (OperationalError, InterfaceError, SATimeoutError, psycopg.OperationalError, PoolTimeout):
        app.add_exception_handler(outage, _database_down)

    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, exc: ClientDisconnect) -> Response:
        # The client went away before its body arrived: nobody reads the reply. One line, no traceback.
        log.warning("%s %s: the client disconnected before its request body was read", request.method, request.url.path)
        return Response(status_code=400)

    @app.exception_handler(DataError)
    async def _unstorable(request: Request, exc: DataError) -> JSONResponse:
        # A value PostgreSQL cannot store (a NUL character in text, a number out of range) that no
        # validation caught: the request is refused, not the server broken.
        log.warning("%s %s: refused a value the database cannot store (%s)", request.method, request.url.path, exc.orig)
        return JSONResponse({"message": UNSTORABLE}, status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"message": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)
