"""Generated apps against a Prism mock of their own OpenAPI document.

For a rotating sample of generated apps (without SigV4: Prism cannot check signatures), Prism
(``@stoplight/prism-cli`` 5, installed into ``~/.cache/konnectz/prism`` by ``make catalogue-mocks``)
serves the app's document trimmed to the manifest's operations and validates every request
against it. Every event runs through the real ``app_event`` step; a polling trigger is polled
twice and finds no new items the second time.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import test_generated_catalogue as generated_module  # a sibling: conftest puts runner/tests on sys.path

from konnectz_contracts.manifest import App, Polling
from konnectz_contracts.steps.app_event import AppEventStep
from konnectz_devstack._ports import free_port
from konnectz_runner.apps import Catalogue
from konnectz_runner.engine import app_event
from konnectz_runner.engine.steps.app_event import new_items

PRISM = Path(os.environ.get("KONNECTZ_CACHE", Path.home() / ".cache" / "konnectz")) / "prism/node_modules/.bin/prism"


pytestmark = [
    pytest.mark.skipif(not PRISM.exists(), reason="run `make catalogue-mocks` first (Prism missing)"),
    generated_module.pytestmark,
]


def _trimmed(app: App, doc: dict[str, Any]) -> dict[str, Any]:
    keep = {e.operation.path for e in app.events if e.operation is not None}
    return {**doc, "paths": {p: item for p, item in doc["paths"].items() if p in keep}}


@pytest.fixture
def prism_app(tmp_path: Path) -> Iterator[tuple[App, str]]:
    seed = os.environ.get("KONNECTZ_SAMPLE_SEED") or generated_module.DEFAULT_SEED
    candidates = [
        a
        for a in generated_module.generated()
        if a.auth.type in ("none", "api_key") and a.can_trigger and len(a.events) <= 20
    ]
    app = random.Random(seed).choice(candidates)
    assert app.source.spec_id is not None
    doc = json.loads((generated_module.API_DIR / app.source.spec_id).read_text())
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(_trimmed(app, doc)))
    port = free_port()
    proc = subprocess.Popen(
        [str(PRISM), "mock", "-h", "127.0.0.1", "-p", str(port), str(spec_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.3)
    yield app, url
    proc.terminate()
    proc.wait(timeout=10)


async def test_events_against_prism(prism_app: tuple[App, str], make_ctx: Any) -> None:
    app, url = prism_app
    local = app.model_copy(update={"base_url": url})
    app_event.set_catalogue(lambda: Catalogue(apps=[local]))

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return {f.key: f"{f.key}-value" for f in app.auth.fields}

    app_event.set_credential_source(source)
    try:
        outcomes, steps = {}, {}
        for event in app.events:
            op, shared = generated_module._operation(generated_module.inline_refs(
                json.loads((generated_module.API_DIR / str(app.source.spec_id)).read_text())), event)  # fmt: skip
            values = generated_module._values(event, op, shared)
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
        # Prism answers 422 when a sampled value breaks a pattern (the sampler's limit); a 401, 404,
        # 405 or 415 means the request is misbuilt (credentials, path, method or media type).
        failed = {k: o.error for k, o in outcomes.items() if o.status != "SUCCESS"}
        misbuilt = {k: e for k, e in failed.items() if e and any(f"HTTP {c} " in e for c in (401, 404, 405, 415))}
        assert not misbuilt, f"{app.key}: {misbuilt}"
        assert len(failed) <= 0.5 * len(outcomes), f"{app.key}: {failed}"
        trigger = next(e for e in app.events if e.kind == "trigger")
        assert trigger.trigger is not None and isinstance(trigger.trigger, Polling)
        first = outcomes[trigger.key]
        assert first.status == "SUCCESS", first.error
        fresh, cursor = new_items(first.output["items"], None, trigger.trigger)
        again = await app_event.run(steps[trigger.key], make_ctx())
        assert again.status == "SUCCESS", again.error
        fresh, cursor = new_items(again.output["items"], cursor, trigger.trigger)
        assert fresh == []
    finally:
        app_event.set_credential_source(None)
        app_event.set_catalogue(app_event.default_catalogue)
