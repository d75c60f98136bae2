import ast
import inspect
from pathlib import Path

import konnectz_contracts.events
import konnectz_contracts.spec
import konnectz_runner

REPO = Path(__file__).resolve().parents[2]


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
    # The contracts live in konnectz_contracts (the runner does not re-export them) ...
    for module, names in (
        (konnectz_contracts.spec, ("FlowSpec", "ApiCallStep", "WebhookTrigger", "KeyValue", "Trigger", "Step")),
        (
            konnectz_contracts.events,
            ("RunRequest", "TaskEvent", "StepResult", "STREAM_RUNS", "STREAM_EVENTS", "KV_KONNECTS",
             "run_subject", "event_subject"),
        ),
    ):  # fmt: skip
        for name in names:
            assert name in module.__all__, name
            assert name not in konnectz_runner.__all__, name
    # ... and the runner's facade exports what runs them.
    for name in ("ensure_streams", "publish_run", "publish_event", "execute", "run_step", "NetGuard", "Settings"):
        assert name in konnectz_runner.__all__, name
    assert konnectz_contracts.events.STREAM_RUNS == "KZ_RUNS"
    assert konnectz_contracts.events.STREAM_EVENTS == "KZ_EVENTS"
    assert konnectz_contracts.events.KV_KONNECTS == "KZ_KONNECTS"


def _runner_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("konnectz_runner."):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Import):
            found += [
                f"{path.relative_to(REPO)}:{node.lineno}: import {alias.name}"
                for alias in node.names
                if alias.name.startswith("konnectz_runner.")
            ]
    return found


def test_other_packages_import_the_runner_only_from_its_facade() -> None:
    """The api, the operator and the dev stack use ``from konnectz_runner import ...`` only."""
    offending = [
        line
        for src in ("api/src", "operator/src", "devstack/src")
        for path in sorted((REPO / src).rglob("*.py"))
        for line in _runner_imports(path)
    ]
    assert not offending, "\n".join(offending)
    # And the facade serves every name they import from it.
    for src in ("api/src", "operator/src", "devstack/src"):
        for path in (REPO / src).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module == "konnectz_runner":
                    for alias in node.names:
                        assert alias.name in konnectz_runner.__all__, f"{path}: {alias.name}"


def test_the_operator_does_not_import_the_runner() -> None:
    offending = [
        f"{path.relative_to(REPO)}"
        for path in sorted((REPO / "operator/src").rglob("*.py"))
        if "konnectz_runner" in {
            (node.module or "").split(".")[0]
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom)
        }
    ]  # fmt: skip
    assert not offending, offending
