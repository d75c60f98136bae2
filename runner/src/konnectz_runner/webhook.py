"""Turning an incoming webhook request into a trigger output (a JSON object).

- ``application/json`` (or ``+json``): an object is used as is; an array or a scalar becomes
  ``{"data": value}``; invalid JSON is refused (400).
- ``application/x-www-form-urlencoded`` and ``multipart/form-data``: a dict of fields (a field
  sent several times becomes a list; uploaded files are described, not stored).
- any other or no content type: JSON if the body parses as JSON, else ``{"data": "<text>"}``.
- an empty body is ``{}``.
- query parameters, when present, are added under ``"query"`` (a body key named ``query`` wins).
- bodies larger than ``max_body_bytes`` are refused (413), without reading them whole.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

__all__ = ["WebhookError", "read_trigger_output"]


class WebhookError(Exception):
    """A request the webhook refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _add(fields: dict[str, Any], key: str, value: Any) -> None:
    if key not in fields:
        fields[key] = value
    elif isinstance(fields[key], list):
        fields[key].append(value)
    else:
        fields[key] = [fields[key], value]


async def _read_body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length")
    too_large = WebhookError(413, f"Request body is larger than {max_bytes} bytes")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"data": value}


async def _multipart(request: Request, body: bytes) -> dict[str, Any]:
    async def replay() -> AsyncGenerator[bytes, None]:
        yield body

    try:
        form = await MultiPartParser(request.headers, replay()).parse()
    except MultiPartException as exc:
        raise WebhookError(400, f"Invalid form body: {exc.message}") from exc
    fields: dict[str, Any] = {}
    for key, value in form.multi_items():
        if isinstance(value, UploadFile):
            described = {"filename": value.filename, "content_type": value.content_type, "size": value.size}
            await value.close()
            _add(fields, key, described)
        else:
            _add(fields, key, value)
    return fields


async def read_trigger_output(
    request: Request, max_bytes: int, *, verify: Callable[[bytes], Awaitable[None]] | None = None
) -> dict[str, Any]:
    """The run's trigger output from the request; ``verify`` sees the raw body first (and raises
    :class:`WebhookError` to refuse it, e.g. a wrong signature)."""
    body = await _read_body(request, max_bytes)
    if verify is not None:
        await verify(body)
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    output: dict[str, Any]
    if not body.strip():
        output = {}
    elif media_type == "application/json" or media_type.endswith("+json"):
        try:
            output = _as_object(json.loads(body))
        except ValueError as exc:
            raise WebhookError(400, f"Invalid JSON body: {exc}") from exc
    elif media_type == "application/x-www-form-urlencoded":
        output = {}
        for key, value in parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True):
            _add(output, key, value)
    elif media_type == "multipart/form-data":
        output = await _multipart(request, body)
    else:
        text = body.decode("utf-8", errors="replace")
        try:
            output = _as_object(json.loads(text))
        except ValueError:
            output = {"data": text}
    if request.query_params:
        query: dict[str, Any] = {}
        for key, value in request.query_params.multi_items():
            _add(query, key, value)
        output.setdefault("query", query)
    return output
