"""Secrets typed into steps, end to end through real processes (api, runner, PostgreSQL, NATS).

An API Call's ``Authorization`` header is typed as secret and its ``api_key`` parameter is sent with
``secret: false`` (a listed name: the api seals it anyway): the draft row in PostgreSQL holds neither
in plain text, the editor reads them back as the mask, saving the mask
keeps them, the published run sends the real values to a local HTTP server (the runner opens them
through the api's broker) and neither the task log nor the published spec holds them.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import psycopg
import pytest

from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import sign_up, wait_until, webhook_canvas
from konnectz_devstack.testing import test_trigger as trigger_konnect_id

pytestmark = pytest.mark.integration

TOKEN = "Bearer sk-live-7f3a9c1e5b2d4680"
API_KEY = "key-0b9e8d7c6a5f4e3d"
MASK = "••••••"


def canvas(endpoint: str, authorization: str, api_key: str) -> dict[str, Any]:
    return webhook_canvas(
        f"{endpoint}/orders",
        name="Secret headers",
        headers=[
            {"key": "Authorization", "value": authorization, "secret": True},
            {"key": "X-Order", "value": "{{node-1.order}}"},
        ],
        # The lock turned off: a listed name is secret on the server whatever the client sends.
        params=[{"key": "api_key", "value": api_key, "secret": False}],
        body=[{"key": "name", "value": "{{node-1.name}}"}],
    )


def api_rows(canvas_json: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    details = canvas_json["apps"][1]["data"]["selectedValue"]["apiDetails"]
    return {"headers": details["headers"], "params": details["params"]}


def test_a_secret_header_is_encrypted_masked_and_sent_only_by_the_runner(receiver) -> None:
    with running_platform("konnectz-secrets-") as platform:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        headers = sign_up(api, "ada-secrets@example.com", "correct horse battery")
        konnect_id = trigger_konnect_id(api, headers, canvas(receiver.url, TOKEN, API_KEY))

        def stored() -> str:
            with psycopg.connect(platform.postgres.dsn) as db:
                row = db.execute(
                    "SELECT canvas_json::text, coalesce(published_spec::text, '') FROM konnects WHERE id = %s",
                    (konnect_id,),
                ).fetchone()
            assert row is not None
            return row[0] + row[1]

        # Stored: encrypted (the credential cipher's "<key id>:<Fernet token>"), never in plain text.
        text = stored()
        assert TOKEN not in text and "sk-live" not in text and API_KEY not in text
        with psycopg.connect(platform.postgres.dsn) as db:
            (draft,) = db.execute("SELECT canvas_json FROM konnects WHERE id = %s", (konnect_id,)).fetchone()
        sealed = [r.get("sealed") for r in api_rows(draft)["headers"] + api_rows(draft)["params"]]
        assert sealed[0] and sealed[2] and sealed[1] is None
        assert api_rows(draft)["headers"][0]["value"] == ""

        # Read back: the fixed mask, no envelope.
        edit = api.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()
        rows = api_rows(edit["canvas_json"])
        assert rows["headers"][0] == {"key": "Authorization", "value": MASK, "secret": True}
        assert rows["params"][0] == {"key": "api_key", "value": MASK, "secret": True}
        assert rows["headers"][1]["value"] == "{{node-1.order}}"
        assert "sealed" not in json.dumps(edit)

        # Saving and publishing what the editor shows (the mask) keeps the stored secret.
        r = api.post(
            "/api/v1/konnects/publish_konnect",
            headers=headers,
            json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": edit["canvas_json"]},
        )
        assert r.status_code == 200, r.text
        with psycopg.connect(platform.postgres.dsn) as db:
            (draft_after,) = db.execute("SELECT canvas_json FROM konnects WHERE id = %s", (konnect_id,)).fetchone()
        assert api_rows(draft_after)["headers"][0]["sealed"] == sealed[0]
        text = stored()  # the published spec carries the sealed value only
        assert TOKEN not in text and API_KEY not in text and sealed[0] in text

        # The run: the runner opens the secret through the broker and sends the real values.
        hook = r.json()["webhook_url"]
        wait_until(lambda: httpx.post(hook, json={"name": "Ada", "order": "A-1"}, timeout=10).status_code == 200)
        wait_until(lambda: receiver.requests)
        sent = receiver.requests[0]
        assert sent["headers"]["Authorization"] == TOKEN
        assert sent["headers"]["X-Order"] == "A-1"
        assert sent["path"] == f"/orders?api_key={API_KEY}"

        # The task log (and every stored step result) shows neither value.
        logs = wait_until(
            lambda: api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
        )
        assert logs[0]["status"] == "SUCCESS", logs[0]
        assert TOKEN not in json.dumps(logs) and API_KEY not in json.dumps(logs)
        with psycopg.connect(platform.postgres.dsn) as db:
            rows_text = db.execute(
                "SELECT coalesce(string_agg(t::text, ''), '') FROM task_logs t WHERE konnect_id = %s", (konnect_id,)
            ).fetchone()[0]
            # task payloads may live in their own table: read every text column of the run's rows
            tables = [
                r[0]
                for r in db.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
                    "AND table_name LIKE 'task%%'"
                )
            ]
            everything = rows_text + "".join(
                db.execute(f"SELECT coalesce(string_agg(x::text, ''), '') FROM {t} x").fetchone()[0]  # noqa: S608
                for t in tables
            )
        assert "A-1" in everything  # the run is there ...
        assert TOKEN not in everything and "sk-live" not in everything and API_KEY not in everything  # ... not it
