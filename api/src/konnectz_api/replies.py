"""JSON replies serialised once with orjson, for the hot read routes.

A route that returns a ``Response`` skips FastAPI's validation and serialisation through its
``response_model``; the model still describes the reply in the OpenAPI document, and the routes
build exactly its keys (schemathesis in ``make test`` checks replies against the document).
Datetimes come from the read pool in UTC and serialise as pydantic does (``2025-01-01T10:00:00Z``).
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from konnectz_api.core.jsontext import dumps

_OPTIONS = orjson.OPT_UTC_Z


def json_reply(content: Any, status_code: int = 200) -> Response:
    return Response(dumps(content, _OPTIONS), status_code=status_code, media_type="application/json")
