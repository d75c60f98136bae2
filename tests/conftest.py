"""Fixtures shared by the cross-component tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from konnectz_devstack.fake_apps import JsonHandler, LocalServer


class Receiver:
    """A local HTTP server standing in for a third-party API: records each request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                outer.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(self.rfile.read(length))}
                )
                self._reply(201, {"id": 42, "accepted": True})

        self.server = LocalServer(Handler)
        self.url = self.server.url

    def close(self) -> None:
        self.server.stop()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()
