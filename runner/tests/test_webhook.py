"""Parsing of webhook requests into trigger outputs, through a real Starlette app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from konnectz_runner.ingress.webhook import WebhookError, read_trigger_output

LIMIT = 1024


async def parse(request: Request) -> JSONResponse:
    try:
        return JSONResponse(await read_trigger_output(request, LIMIT))
    except WebhookError as exc:
        return JSONResponse({"message": exc.message}, status_code=exc.status)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = Starlette(routes=[Route("/h", parse, methods=["GET", "POST", "PUT"])])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://runner") as c:
        yield c


async def parsed(client: httpx.AsyncClient, method: str, url: str = "/h", **kwargs: Any) -> Any:
    reply = await client.request(method, url, **kwargs)
    assert reply.status_code == 200, reply.text
    return reply.json()


async def test_json_object(client: httpx.AsyncClient) -> None:
    assert await parsed(client, "POST", json={"a": {"b": [1, 2]}}) == {"a": {"b": [1, 2]}}


async def test_json_array_and_scalar_go_under_data(client: httpx.AsyncClient) -> None:
    assert await parsed(client, "POST", json=[1, 2]) == {"data": [1, 2]}
    assert await parsed(client, "POST", json="hi") == {"data": "hi"}
    vendor_json = {"Content-Type": "application/vnd.api+json"}
    assert await parsed(client, "PUT", content=b"3", headers=vendor_json) == {"data": 3}


async def test_invalid_json_is_400(client: httpx.AsyncClient) -> None:
    reply = await client.post("/h", content=b"{nope", headers={"Content-Type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["message"].startswith("Invalid JSON body: ")


async def test_form_encoded(client: httpx.AsyncClient) -> None:
    got = await parsed(client, "POST", data={"name": "Ada", "tag": ["x", "y"], "empty": ""})
    assert got == {"name": "Ada", "tag": ["x", "y"], "empty": ""}


async def test_multipart_fields_and_files(client: httpx.AsyncClient) -> None:
    got = await parsed(client, "POST", data={"name": "Ada"}, files={"doc": ("a.txt", b"hello", "text/plain")})
    assert got == {"name": "Ada", "doc": {"filename": "a.txt", "content_type": "text/plain", "size": 5}}


async def test_empty_body_and_query(client: httpx.AsyncClient) -> None:
    assert await parsed(client, "POST") == {}
    assert await parsed(client, "GET") == {}
    assert await parsed(client, "GET", "/h?a=1&b=2&b=3") == {"query": {"a": "1", "b": ["2", "3"]}}
    assert await parsed(client, "POST", "/h?src=x", json={"k": 1}) == {"k": 1, "query": {"src": "x"}}
    assert await parsed(client, "POST", "/h?src=x", json={"query": "mine"}) == {"query": "mine"}


async def test_other_content_types(client: httpx.AsyncClient) -> None:
    text = {"Content-Type": "text/plain"}
    assert await parsed(client, "POST", content=b'{"a": 1}', headers=text) == {"a": 1}
    assert await parsed(client, "POST", content=b"hello", headers=text) == {"data": "hello"}


async def test_too_large_body_is_413(client: httpx.AsyncClient) -> None:
    reply = await client.post("/h", json={"x": "y" * LIMIT})
    assert reply.status_code == 413
    assert reply.json() == {"message": f"Request body is larger than {LIMIT} bytes"}


async def test_too_large_chunked_body_is_413(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit holds while reading
        for _ in range(5):
            yield b"a" * 400

    reply = await client.post("/h", content=chunks(), headers={"Content-Type": "text/plain"})
    assert reply.status_code == 413
