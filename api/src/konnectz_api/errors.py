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
``Retry-After``, one warning line, no traceback. So is every bounded wait that ran out
(docs/concurrency.md): a row lock not granted within ``lock_timeout`` (:data:`BUSY`), a statement
cancelled by ``statement_timeout`` or a transaction ended by ``idle_in_transaction_session_timeout``
(:data:`TOO_SLOW`), no pool connection within the pool's timeout (:data:`BUSY`); a reply not ready by
the request deadline is answered by :mod:`konnectz_api.pressure`. A deadlock or serialization failure
is a lost race: 409.
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
from sqlalchemy.exc import DataError, DBAPIError, InterfaceError, InternalError, OperationalError
from sqlalchemy.exc import TimeoutError as SATimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response

log = logging.getLogger(__name__)
DATABASE_DOWN = "The database is unavailable right now. Please try again shortly."
DATABASE_RETRY_AFTER_SECONDS = 5
BUSY = "Another change to this account is in progress. Please try again in a moment."
BUSY_RETRY_AFTER_SECONDS = 1
TOO_SLOW = "The request took too long in the database and was stopped. Please try again shortly."
LOST_RACE = "Another change to the same data happened at the same moment. Please try again."
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


class Gone(ApiError):
    status_code = 410


class PayloadTooLarge(ApiError):
    status_code = 413


class Unprocessable(ApiError):
    status_code = 422


class TooManyRequests(ApiError):
    status_code = 429


class ServiceUnavailable(ApiError):
    status_code = 503


#: Keys a route's own 422 carries, added to its validation errors too (by route path), so the route
#: answers one documented shape: ``test_and_review``'s ``test_status``.
VALIDATION_EXTRAS: dict[str, Callable[[str], dict[str, Any]]] = {}


def _describe(errors: list[Any]) -> str:
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path"))
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts) or "Invalid request"


def _orig(exc: Exception) -> BaseException:
    return exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc


def _bounded_wait(exc: Exception) -> tuple[int, str, int, str] | None:
    """(status, message, Retry-After seconds, log text) of a wait that ran out, else None (an outage)."""
    orig = _orig(exc)
    if isinstance(orig, psycopg.errors.LockNotAvailable):
        return 503, BUSY, BUSY_RETRY_AFTER_SECONDS, "a row lock was not granted within lock_timeout"
    if isinstance(orig, psycopg.errors.QueryCanceled):
        return 503, TOO_SLOW, DATABASE_RETRY_AFTER_SECONDS, "a statement was cancelled by statement_timeout"
    if isinstance(orig, psycopg.errors.IdleInTransactionSessionTimeout):
        return 503, TOO_SLOW, DATABASE_RETRY_AFTER_SECONDS, "a transaction was ended by its idle timeout"
    if isinstance(orig, (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)):
        return 409, LOST_RACE, 0, "a concurrent transaction won the race"
    if isinstance(exc, (SATimeoutError, PoolTimeout)):
        return 503, BUSY, BUSY_RETRY_AFTER_SECONDS, "no database connection was free within the pool's timeout"
    return None


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
        bounded = _bounded_wait(exc)
        if bounded is not None:
            status, message, retry_after, what = bounded
            log.warning("%s %s: %s (%s)", request.method, request.url.path, what, type(_orig(exc)).__name__)
            headers = {"Retry-After": str(retry_after)} if retry_after else None
            return JSONResponse({"message": message}, status_code=status, headers=headers)
        log.warning("%s %s: the database is unavailable (%s)", request.method, request.url.path, type(exc).__name__)
        return JSONResponse(
            {"message": DATABASE_DOWN},
            status_code=503,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS)},
        )

    # The sync engine's errors (SQLAlchemy wraps psycopg's) and the async read pool's (psycopg's own,
    # and a pool that found no connection in time): an outage is a 503, never a 500.
    for outage in (
        OperationalError,
        InterfaceError,
        SATimeoutError,
        psycopg.OperationalError,
        PoolTimeout,
    ):
        app.add_exception_handler(outage, _database_down)

    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        # Only a transaction the server ended for idling is a bounded wait; any other internal error
        # is a defect and stays a 500 with its traceback.
        if isinstance(_orig(exc), psycopg.errors.IdleInTransactionSessionTimeout):
            return await _database_down(request, exc)
        raise exc

    app.add_exception_handler(InternalError, _internal)
    app.add_exception_handler(psycopg.InternalError, _internal)

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
