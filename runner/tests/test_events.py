"""The wire contract: models, subjects and the streams ensure_streams creates on a real NATS."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import nats
import pytest
from nats.js.api import StorageType
from pydantic import ValidationError

from konnectz_contracts.events import (
    DUPLICATE_WINDOW_SECONDS,
    KV_KONNECTS,
    STREAM_EVENTS,
    STREAM_RUNS,
    RunRequest,
    StepResult,
    TaskEvent,
    event_subject,
    konnect_key,
    msg_id_headers,
    run_subject,
)
from konnectz_contracts.limits import KV_MAX_BYTES, kv_max_bytes
from konnectz_contracts.spec import ApiCallStep, FlowSpec, WebhookTrigger
from konnectz_runner.bus import ensure_streams, kv_config, publish_run

NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


def test_subjects_and_keys() -> None:
    assert run_subject(12) == "kz.runs.12"
    assert event_subject(12) == "kz.events.12"
    assert konnect_key(12) == "konnect.12"
    assert msg_id_headers("abc") == {"Nats-Msg-Id": "abc"}


def test_run_request_needs_an_aware_time() -> None:
    RunRequest(run_id="r", konnect_id=1, trigger_output={}, received_at=NOW)
    with pytest.raises(ValidationError):
        RunRequest(run_id="r", konnect_id=1, trigger_output={}, received_at=datetime(2026, 1, 1))
    with pytest.raises(ValidationError):
        RunRequest(run_id="r", konnect_id=1, trigger_output={}, received_at=NOW, source="cron")
    with pytest.raises(ValidationError):
        RunRequest.model_validate({"run_id": "r", "konnect_id": 1, "trigger_output": {}, "received_at": NOW, "x": 1})


def test_task_event_round_trips_as_json() -> None:
    step = StepResult(step_id="node-2", name="Send", app="api_call", status="ERROR", started_at=NOW, finished_at=NOW,
                      input={"url": "https://x"}, output=None, error="HTTP 500 from https://x/: boom")  # fmt: skip
    event = TaskEvent(run_id="r", konnect_id=1, owner_id=2, konnect_name="K", status="ERROR", started_at=NOW,
                      finished_at=NOW, trigger_id="node-1", trigger_output={"a": 1}, steps=[step])  # fmt: skip
    assert TaskEvent.model_validate_json(event.model_dump_json()) == event


def test_flow_spec_validation() -> None:
    spec = FlowSpec(konnect_id=1, owner_id=2, name="K", trigger_id="node-1", trigger=WebhookTrigger(token="a" * 20),
                    steps=[ApiCallStep(id="node-2", name="S", url="https://example.com")])  # fmt: skip
    data: dict[str, Any] = spec.model_dump(mode="json")
    assert data["trigger"] == {"kind": "webhook", "token": "a" * 20}
    assert data["steps"][0]["kind"] == "api_call" and data["steps"][0]["method"] == "POST"
    assert FlowSpec.model_validate_json(spec.model_dump_json()) == spec
    with pytest.raises(ValidationError):  # short token
        FlowSpec.model_validate({**data, "trigger": {"kind": "webhook", "token": "short"}})
    with pytest.raises(ValidationError):  # no steps
        FlowSpec.model_validate({**data, "steps": []})
    with pytest.raises(ValidationError):  # unknown field
        FlowSpec.model_validate({**data, "extra": 1})
    with pytest.raises(ValidationError):  # unknown step kind
        FlowSpec.model_validate({**data, "steps": [{**data["steps"][0], "kind": "formatter"}]})
    with pytest.raises(ValidationError):  # method outside the list
        FlowSpec.model_validate({**data, "steps": [{**data["steps"][0], "method": "TRACE"}]})


@pytest.mark.integration
async def test_ensure_streams_creates_file_streams_and_bucket_idempotently(nats_server: Any) -> None:
    nc = await nats.connect(nats_server.admin_url)
    try:
        js = nc.jetstream()
        await ensure_streams(js)
        await ensure_streams(js)  # a second process starting does not fail
        for name, subjects in ((STREAM_RUNS, ["kz.runs.>", "kz.timers.>"]), (STREAM_EVENTS, ["kz.events.>"])):
            info = await js.stream_info(name)
            assert info.config.subjects == subjects
            assert bool(info.config.allow_msg_schedules) == (name == STREAM_RUNS)
            assert info.config.storage == StorageType.FILE
            assert info.config.duplicate_window == DUPLICATE_WINDOW_SECONDS
        kv = await js.key_value(KV_KONNECTS)
        await kv.put("konnect.1", b"{}")
        assert (await kv.get("konnect.1")).value == b"{}"
        await kv.delete("konnect.1")

        # The same run published twice within the window is stored once.
        run = RunRequest(run_id=uuid.uuid4().hex, konnect_id=777001, trigger_output={}, received_at=NOW)
        first = await publish_run(js, run)
        second = await publish_run(js, run)
        assert first.stream == STREAM_RUNS
        assert second.duplicate and second.seq == first.seq
    finally:
        await nc.drain()


async def test_every_bucket_has_its_size_bound_and_an_existing_one_gets_it(nats_server: Any) -> None:
    """Each key/value bucket is bounded in bytes (KV_MAX_BYTES), not only by age; a bucket made before
    the bound (or by hand) gets it when a runner starts; buckets of one value per flow stay unbounded."""
    nc = await nats.connect(nats_server.admin_url)
    try:
        js = nc.jetstream()
        await ensure_streams(js)
        bounded = {name: bound for name, bound in KV_MAX_BYTES.items() if bound is not None}
        made = {
            s.config.name: s.config.max_bytes for s in await js.streams_info() if s.config.name.startswith("KV_KZ_")
        }
        for name, bound in bounded.items():
            if f"KV_{name}" in made:  # KZ_SLOTS, KZ_LEADERS and KZ_CAPTURING are opened on first use
                assert made[f"KV_{name}"] == bound, name
        assert {"KV_KZ_STEPS", "KV_KZ_IDEMPOTENCY", "KV_KZ_ACTIVE", "KV_KZ_CANCELS"} <= set(made)
        assert made["KV_KZ_KONNECTS"] == -1
        config = (await js.stream_info("KV_KZ_STEPS")).config
        config.max_bytes = -1
        await js.update_stream(config)
        await ensure_streams(js)
        assert (await js.stream_info("KV_KZ_STEPS")).config.max_bytes == kv_max_bytes("KZ_STEPS") == 2 * 1024**3
        # What passes the bound is refused, not dropped: a tiny bucket made the same way shows it.
        tiny = kv_config("KZ_TEST_TINY_" + uuid.uuid4().hex[:6])
        tiny.max_bytes = 2048
        kv = await js.create_key_value(tiny)
        await kv.put("a", b"x" * 1000)
        with pytest.raises(Exception, match=r"(?i)maximum bytes"):
            await kv.put("b", b"x" * 1500)
        assert (await kv.get("a")).value == b"x" * 1000
        await js.delete_stream(f"KV_{tiny.bucket}")
    finally:
        await nc.drain()


async def test_ensure_streams_upgrades_a_runs_stream_made_without_timers() -> None:
    import shutil
    import tempfile
    from pathlib import Path

    from nats.js.api import StreamConfig

    from konnectz_devstack._nats import NatsServer
    from konnectz_devstack._ports import free_port

    base = Path(tempfile.mkdtemp(prefix="konnectz-nats-old-"))
    own = NatsServer(base, free_port())
    own.start()
    try:
        nc = await nats.connect(own.admin_url)
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name=STREAM_RUNS, subjects=["kz.runs.>"], storage=StorageType.FILE))
        await ensure_streams(js)
        info = await js.stream_info(STREAM_RUNS)
        assert info.config.subjects == ["kz.runs.>", "kz.timers.>"] and info.config.allow_msg_schedules
        await nc.close()
    finally:
        own.stop()
        shutil.rmtree(base, ignore_errors=True)
