import inspect

import konnectz_runner


def test_all_lists_exactly_the_public_names() -> None:
    public = {
        name
        for name, value in vars(konnectz_runner).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert set(konnectz_runner.__all__) == public
    assert len(konnectz_runner.__all__) == len(set(konnectz_runner.__all__))


def test_every_exported_name_resolves() -> None:
    for name in konnectz_runner.__all__:
        assert getattr(konnectz_runner, name) is not None, name


def test_contract_names_are_exported() -> None:
    contract = (
        "FlowSpec", "ApiCallStep", "WebhookTrigger", "KeyValue", "Trigger", "Step",
        "RunRequest", "TaskEvent", "StepResult", "STREAM_RUNS", "STREAM_EVENTS", "KV_KONNECTS",
        "ensure_streams", "run_subject", "event_subject", "execute", "NetGuard", "Settings",
    )  # fmt: skip
    for name in contract:
        assert name in konnectz_runner.__all__, name
    assert konnectz_runner.STREAM_RUNS == "KZ_RUNS"
    assert konnectz_runner.STREAM_EVENTS == "KZ_EVENTS"
    assert konnectz_runner.KV_KONNECTS == "KZ_KONNECTS"
