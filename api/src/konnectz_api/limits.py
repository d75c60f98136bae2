"""Caps on request bodies, for every route.

- Size: a larger body is refused with 413 before it is read whole. The declared ``Content-Length``
  is checked first; a body sent without one (chunked) is counted as it arrives. The cap is
  ``KONNECTZ_MAX_REQUEST_BYTES`` (2 MiB by default).
- JSON (:class:`JsonLimitMiddleware`): a JSON body (any ``application/json`` or ``+json`` type, in any
  letter case, or no content type, which FastAPI also parses as JSON) nested deeper than
  :data:`~konnectz_contracts.limits.API_MAX_JSON_DEPTH` levels, or holding a lone UTF-16 surrogate
  (``"\\ud800"``, which no database can store), is refused with 400 and the reason before any route
  sees it. Without this, a body nested about 1,000 deep was a 500 (RecursionError).
"""

from __future__ import annotations

import json
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from konnectz_contracts.limits import API_MAX_JSON_DEPTH, TooDeep, check_depth

__all__ = ["BodyLimitMiddleware", "JsonLimitMiddleware", "json_problem"]

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_PAIR = re.compile(rb"\{\}|\[\]")
_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F]")


def _deeper_than(body: bytes, limit: int) -> bool:
    """Whether the brackets of ``body`` (strings left out) nest deeper than ``limit``, in C-speed passes:
    each pass removes the innermost pairs, so ``limit`` passes empty any document that is not deeper."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    skeleton = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    for _ in range(limit):
        if not skeleton:
            return False
        skeleton = _PAIR.sub(b"", skeleton)
    return bool(skeleton)


def json_problem(body: bytes, limit: int = API_MAX_JSON_DEPTH) -> str | None:
    """Why a JSON body must be refused (too deep, a lone surrogate), or None. Malformed JSON is left
    to the route's own validation."""
    deep = _deeper_than(body, limit)
    if not deep and _SURROGATE_ESCAPE.search(body) is None:
        return None
    try:
        value = json.loads(body)
        check_depth(value, limit)
    except (RecursionError, TooDeep):
        return f"The JSON body is nested deeper than {limit} levels"
    except ValueError:
        return None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "The JSON body holds a lone UTF-16 surrogate (such as \\ud800), which is not a character"
    return None


def _is_json(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            media = value.split(b";", 1)[0].strip().lower()
            return media == b"application/json" or media.endswith(b"+json")
    return True  # no content type: FastAPI reads the body as JSON


async def _reply_400(send: Send, message: str) -> None:
    body = json.dumps({"message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class JsonLimitMiddleware:
    """Refuses JSON bodies nested too deep or holding lone surrogates (see the module)."""

    def __init__(self, app: ASGIApp, max_depth: int = API_MAX_JSON_DEPTH) -> None:
        self.app = app
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS") or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        problem = json_problem(b"".join(chunks), self.max_depth)
        if problem is not None:
            await _reply_400(send, problem)
            return
        replay = iter(messages)

        async def replaying_receive() -> Message:
            try:
                return next(replay)
            except StopIteration:
                return await receive()

        await self.app(scope, replaying_receive, send)


class _TooLarge(Exception):
    pass


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _refuse(self, send: Send) -> None:
        body = f'{{"message":"The request body is larger than {self.max_bytes} bytes"}}'.encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._refuse(send)
                return
        received = 0
        started = False
        too_large = False

        async def counting_receive() -> Message:
            nonlocal received, too_large
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    too_large = True
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            # The app may turn the interrupted read into its own error reply: answer 413 instead.
            nonlocal started
            if too_large:
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await self._refuse(send)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _TooLarge:
            if not started:
                await self._refuse(send)
