"""Widgets: AI frame URLs from configuration with a scoped authToken; plain 'not configured' without a host."""

from urllib.parse import parse_qs, urlsplit

import jwt
import pytest

from konnectz_api.core.config import Settings, get_settings
from konnectz_api.deps import app_settings

SECRET = "ai-host-secret-0123456789abcdef0123456789"


def test_no_ai_host_configured(client, api):
    headers = api.new_user()
    assert client.get("/api/v1/widgets/active", headers=headers).json() == {"widgets": [], "ai_host_configured": False}
    # A 200 that says so (no 404 in the browser's console): the pages tell what to start.
    for name, title in (("chatflows", "Chatflows"), ("agentflows", "Agentflows"), ("tools", "Tools")):
        r = client.get(f"/api/v1/widgets/details/{name}", headers=headers)
        assert r.status_code == 200, r.text
        assert r.json() == {
            "id": name,
            "name": title,
            "configured": False,
            "url": None,
            "message": "No AI host is configured for this Konnectz installation.",
        }
    assert client.get("/api/v1/widgets/details/nope", headers=headers).status_code == 404
    assert client.get("/api/v1/widgets/details/chatflows").status_code == 401
    assert client.get("/api/v1/widgets/active").status_code == 401


def test_frames_carry_a_scoped_auth_token(client, api):
    headers = api.new_user()
    session_token = headers["Authorization"].split()[1]
    configured = get_settings().model_copy(
        update={"ai_host_url": "https://ai.example.com/base?x=1", "ai_host_secret": SECRET}
    )
    client.app.dependency_overrides[app_settings] = lambda: configured
    try:
        body = client.get("/api/v1/widgets/active", headers=headers).json()
        assert body["ai_host_configured"] is True
        assert [w["id"] for w in body["widgets"]] == ["chatflows", "agentflows", "tools", "ai"]
        r = client.get("/api/v1/widgets/details/agentflows", headers=headers)
        assert r.status_code == 200 and r.json()["name"] == "Agentflows" and r.json()["configured"] is True
        url = urlsplit(r.json()["url"])
        assert (url.scheme, url.netloc, url.path) == ("https", "ai.example.com", "/base/agentflows")
        query = parse_qs(url.query)
        assert query["x"] == ["1"]
        token = query["authToken"][0]
        assert token != session_token  # the session token never goes to the AI host
        claims = jwt.decode(token, SECRET, algorithms=["HS256"], audience="konnectz-ai")
        assert claims["email"].endswith("@example.com") and int(claims["sub"]) > 0
        with pytest.raises(jwt.InvalidTokenError):
            jwt.decode(token, get_settings().secret_key, algorithms=["HS256"], audience="konnectz-ai")
        assert client.get("/api/v1/widgets/details/nope", headers=headers).status_code == 404
        assert client.get("/api/v1/widgets/details/" + "x" * 5000, headers=headers).status_code == 404
    finally:
        client.app.dependency_overrides.clear()


def test_ai_host_needs_its_secret():
    with pytest.raises(ValueError, match="KONNECTZ_AI_HOST_SECRET"):
        Settings(ai_host_url="https://ai.example.com")
