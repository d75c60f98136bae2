"""Edges of a request the api must survive quietly: a client that disconnects in the middle of its body is
one log line, not a traceback; a sign-up whose name holds a NUL character is a 4xx that says why."""

from __future__ import annotations

import socket
import time

import httpx

from konnectz_devstack.testing import served_api


def test_a_client_that_disconnects_mid_body_is_one_log_line(api_env, client, api, tmp_path):
    token = api.new_user()["Authorization"]
    log = tmp_path / "api.log"
    with served_api(api_env, log) as (base, _proc):
        port = int(base.rsplit(":", 1)[1])

        def healthy() -> bool:
            return httpx.get(f"{base}/healthz", timeout=2).status_code == 200

        calls = [
            ("/api/v1/signup", "application/json"),
            ("/api/v1/konnects/save_konnect", "application/json"),
            ("/api/v1/users/profile", "application/json"),  # a route that reads its body itself
            ("/api/v1/users/profile", "multipart/form-data; boundary=x"),
        ]
        first_bytes = {
            "application/json": b'{"first_name": "half',
            "multipart/form-data; boundary=x": b'--x\r\nContent-Disposition: form-data; name="image"; '
            b'filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG half',
        }
        for path, content_type in calls:
            with socket.create_connection(("127.0.0.1", port)) as sock:
                head = (
                    f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
                    f"Content-Length: 5000\r\nAuthorization: {token}\r\n\r\n"
                )
                sock.sendall(head.encode() + first_bytes[content_type])
                time.sleep(0.3)
            time.sleep(0.3)
        assert healthy()  # the api serves on
        time.sleep(0.5)
        text = log.read_text(errors="replace")
        lines = [line for line in text.splitlines() if "disconnect" in line.lower()]
        assert "Traceback" not in text, text[-3000:]
        # Routes that read their body themselves say so in one line each (FastAPI's own body reading
        # answers the lost request with a 400 nobody reads, without a line).
        assert len(lines) == 2, text[-3000:]
        assert all("the client disconnected before its request body was read" in line for line in lines), lines


def test_a_nul_in_a_name_is_a_4xx_that_says_why(client):
    for name in ("Ada\x00", "\x00", "A\x00B"):
        r = client.post(
            "/api/v1/signup",
            json={
                "email": f"nul-{time.time_ns()}@example.com",
                "first_name": name,
                "last_name": name,
                "password": "s3cret-pass",
                "password_confirmation": "s3cret-pass",
                "is_admin": False,
            },
        )
        assert r.status_code == 422, r.text
        assert "first_name" in r.json()["message"] and "control characters" in r.json()["message"]
