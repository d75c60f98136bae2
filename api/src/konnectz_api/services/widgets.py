"""Widgets: the AI host's pages (Chatflows, Agentflows, Tools, AI) embedded as frames.

Their URLs come from configuration (``KONNECTZ_AI_HOST_URL`` + ``KONNECTZ_AI_*_PATH``); each gets an
``authToken`` query parameter: a JWT signed with ``KONNECTZ_AI_HOST_SECRET`` (HS256, audience
``konnectz-ai``, subject the user id, claims email and name, valid ``KONNECTZ_AI_TOKEN_MINUTES``). The AI
host verifies it with the same secret; the user's Konnectz session token never leaves Konnectz.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode, urlsplit, urlunsplit

import jwt

from konnectz_api.core.config import Settings
from konnectz_api.models import User

AI_AUDIENCE = "konnectz-ai"


@dataclass(frozen=True)
class Widget:
    id: str
    name: str
    path: str


def widgets(settings: Settings) -> list[Widget]:
    return [
        Widget("chatflows", "Chatflows", settings.ai_chatflows_path),
        Widget("agentflows", "Agentflows", settings.ai_agentflows_path),
        Widget("tools", "Tools", settings.ai_tools_path),
        Widget("ai", "AI", settings.ai_home_path),
    ]


def ai_token(settings: Settings, user: User) -> str:
    assert settings.ai_host_secret is not None
    now = datetime.now(UTC)
    payload = {
        "sub": str(user.id),
        "email": user.email,
        "name": f"{user.first_name} {user.last_name}".strip(),
        "aud": AI_AUDIENCE,
        "iat": now,
        "exp": now + timedelta(minutes=settings.ai_token_minutes),
    }
    return jwt.encode(payload, settings.ai_host_secret, algorithm="HS256")


def frame_url(settings: Settings, widget: Widget, token: str) -> str:
    assert settings.ai_host_url is not None
    base = urlsplit(settings.ai_host_url.rstrip("/"))
    path = base.path + "/" + widget.path.lstrip("/")
    query = "&".join(q for q in (base.query, urlencode({"authToken": token})) if q)
    return urlunsplit((base.scheme, base.netloc, path, query, ""))
