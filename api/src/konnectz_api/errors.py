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
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from psycopg_pool import PoolTimeout
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as SATimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)
DATABASE_DOWN = "The database is unavailable right now. Please try again shortly."
DATABASE_RETRY_AFTER_SECONDS = 5


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
        return JSONResponse({"message": _describe(errors), "detail": errors}, status_code=422)

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

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"message": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)
