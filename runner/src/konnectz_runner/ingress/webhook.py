"""Turning an incoming webhook request into a trigger output (a JSON object).

- ``application/json`` (or ``+json``): an object is used as is; an array or a scalar becomes
  ``{"data": value}``; invalid JSON is refused (400).
- ``application/x-www-form-urlencoded`` and ``multipart/form-data``: a dict of fields (a field
  sent several times becomes a list; uploaded files are described, not stored).
- any other or no content type: JSON if the body parses as JSON, else ``{"data": "<text>"}``; a
  body that is not UTF-8 text (or holds control characters other than tab, line feed, carriage
  return and form feed) is refused (415): binary data cannot be a run's input.
- an empty body is ``{}``.
- query parameters, when present, are added under ``"query"`` (a body key named ``query`` wins).
- bodies larger than ``max_body_bytes`` are refused (413), without reading them whole.
- JSON nested deeper than :data:`~konnectz_contracts.limits.MAX_JSON_DEPTH` levels, and strings that
  cannot be stored as UTF-8 (lone surrogates such as ``"\ud800"``), are refused (400).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from konnectz_contracts.limits import MAX_JSON_DEPTH, TooDeep, check_depth

__all__ = ["WebhookError", "parse_json", "read_trigger_output"]

# C0 control characters a text body may not hold (tab, line feed, form feed and carriage return may).
_BINARY = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


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


def parse_json(body: bytes | str, *, depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON, refusing (ValueError with the reason) nesting deeper than ``depth`` levels."""
    try:
        value = json.loads(body)
    except RecursionError as exc:
        raise TooDeep(depth) from exc
    check_depth(value, depth)
    return value


def _text(body: bytes) -> str:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WebhookError(
            415, f"The body is neither JSON nor UTF-8 text (byte {exc.start} is not UTF-8); send JSON, a form or text"
        ) from exc
    found = _BINARY.search(text)
    if found is not None:
        raise WebhookError(
            415,
            f"The body is neither JSON nor text: it holds the control character U+{ord(found.group()):04X} "
            f"at {found.start()}; send JSON, a form or text",
        )
    return text


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
            output = _as_object(parse_json(body))
        except TooDeep as exc:
            raise WebhookError(400, f"Invalid JSON body: {exc} (the limit is {exc.limit})") from exc
        except ValueError as exc:
            raise WebhookError(400, f"Invalid JSON body: {exc}") from exc
    elif media_type == "application/x-www-form-urlencoded":
        output = {}
        for key, value in parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True):
            _add(output, key, value)
    elif media_type == "multipart/form-data":
        output = await _multipart(request, body)
    else:
        text = _text(body)
        try:
            output = _as_object(parse_json(text))
        except TooDeep as exc:
            raise WebhookError(400, f"Invalid JSON body: {exc} (the limit is {exc.limit})") from exc
        except ValueError:
            output = {"data": text}
    if request.query_params:
        query: dict[str, Any] = {}
        for key, value in request.query_params.multi_items():
            _add(query, key, value)
        output.setdefault("query", query)
    return output
