"""Webhook capture for the editor ("Capture Response"): the window, the captured request, their names.

The api opens a :class:`CaptureWindow` for a webhook token (key ``capture.<token>`` in the
``KZ_CAPTURING`` bucket, entries expire after :data:`CAPTURE_TTL_SECONDS`); the runner stores the
request it receives meanwhile as a :class:`CapturedRequest` on :func:`capture_subject` in the
``KZ_CAPTURES`` stream. The NATS I/O of both sides is the runner's ``capture`` module.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict

__all__ = [
    "CAPTURE_TTL_SECONDS",
    "KV_CAPTURING",
    "MAX_CAPTURE_BYTES",
    "STREAM_CAPTURES",
    "SUBJECTS_CAPTURES",
    "CaptureWindow",
    "CapturedRequest",
    "capture_subject",
    "valid_token",
]

KV_CAPTURING = "KZ_CAPTURING"
STREAM_CAPTURES = "KZ_CAPTURES"
SUBJECTS_CAPTURES = "kz.captures.>"
CAPTURE_TTL_SECONDS = 15 * 60
MAX_CAPTURE_BYTES = 256 * 1024 * 1024
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{20,100}$")


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CaptureWindow(_Wire):
    konnect_id: int
    since: AwareDatetime


class CapturedRequest(_Wire):
    konnect_id: int
    received_at: AwareDatetime
    trigger_output: dict[str, Any]


def valid_token(token: str) -> bool:
    """Tokens are URL-safe base64 (``secrets.token_urlsafe``); anything else is never looked up."""
    return bool(_TOKEN.fullmatch(token))


def capture_subject(konnect_id: int) -> str:
    return f"kz.captures.{int(konnect_id)}"
