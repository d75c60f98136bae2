"""The "When a flow fails" trigger's pure parts: compile, the failure's trigger data, stable run ids."""

from datetime import UTC, datetime

import pytest

from konnectz_api.compile.flow import CompileError, compile_flow
from konnectz_contracts.events import StepResult, TaskEvent
from konnectz_contracts.triggers.flow_failed import MAX_INPUT_BYTES, error_run_id, failed_run_output


def _canvas(flows):
    trigger = {
        "id": "node-1",
        "type": "InHouse",
        "position": {"x": 0, "y": 0},
        "data": {
            "node_id": "node-1",
            "app_detail": {"name": "When a flow fails", "provider": "flow_failed", "app_index": 1, "side": "left"},
            "selectedAddonsValue": {"flows": flows},
        },
    }
    call = {
        "id": "node-2",
        "type": "Api",
        "position": {"x": 600, "y": 0},
        "data": {
            "node_id": "node-2",
            "app_detail": {"name": "API Call", "provider": "api", "app_index": 2, "side": "right"},
            "selectedValue": {"apiDetails": {"endpointURL": "https://a.example/", "method": "POST"}},
        },
    }
    return {"apps": [trigger, call], "links": [{"source": "node-1", "target": "node-2"}], "dataForSelect": {}}


def _compile(canvas):
    return compile_flow(canvas, konnect_id=7, owner_id=3, name="n", webhook_token="t" * 43)


def test_the_trigger_compiles_the_flows_it_watches():
    assert _compile(_canvas([])).trigger.model_dump() == {"kind": "flow_failed", "flows": []}
    assert _compile(_canvas([4, 9, 4])).trigger.flows == [4, 9]
    for bad in (["4"], [0], [True], "all"):
        with pytest.raises(CompileError, match=r"node-1.*Flows: choose flows from the list"):
            _compile(_canvas(bad))
    with pytest.raises(CompileError, match="at most 200 flows"):
        _compile(_canvas(list(range(1, 202))))


def _event(trigger_output, steps):
    now = datetime.now(UTC)
    return TaskEvent(
        run_id="r-1",
        konnect_id=12,
        owner_id=3,
        konnect_name="Orders",
        status="ERROR",
        started_at=now,
        finished_at=now,
        trigger_id="node-1",
        trigger_output=trigger_output,
        steps=steps,
        revision=4,
    )


def _step(step_id, status, error=None, continued=None):
    now = datetime.now(UTC)
    return StepResult(
        step_id=step_id,
        name=step_id.title(),
        status=status,
        started_at=now,
        finished_at=now,
        input={},
        output=None,
        error=error,
        continued=continued,
    )


def test_the_failure_names_the_step_that_ended_the_run_and_cuts_a_large_input():
    steps = [
        _step("node-2", "SUCCESS"),
        _step("node-3", "ERROR", "HTTP 404", continued=True),  # went on: not the failure
        _step("node-4", "ERROR", "HTTP 500 from x"),
    ]
    out = failed_run_output(_event({"email": "a@b.c"}, steps), "ERROR", "Orders to CRM")
    assert out["flow"] == {"id": 12, "name": "Orders to CRM", "revision": 4}
    assert out["step"] == {"id": "node-4", "name": "Node-4", "app": "api_call"}
    assert out["error"] == "HTTP 500 from x" and out["input"] == {"email": "a@b.c"}
    assert out["run"]["id"] == "r-1" and out["run"]["status"] == "ERROR"
    big = failed_run_output(_event({"blob": "x" * (MAX_INPUT_BYTES + 1)}, steps), "ERROR", "")
    assert big["input"]["truncated"] is True and big["input"]["bytes"] > MAX_INPUT_BYTES
    assert big["flow"]["name"] == "Orders"  # the event's name when the flow's is not known


def test_the_error_flows_run_id_is_stable_per_failed_run_and_error_flow():
    assert error_run_id("r-1", 5) == error_run_id("r-1", 5)
    assert len({error_run_id("r-1", 5), error_run_id("r-1", 6), error_run_id("r-2", 5)}) == 3
