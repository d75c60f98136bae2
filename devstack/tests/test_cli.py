"""``make dev``'s runner processes: one per core by default (``auto``), an explicit number wins."""

import pytest

from konnectz_devstack import cli


def test_auto_is_one_process_per_core(monkeypatch) -> None:
    monkeypatch.setattr(cli, "_cores", lambda: 2)
    assert cli.runner_processes("auto") == 2
    assert cli.runner_processes(" AUTO ") == 2
    assert cli.runner_processes(None) == 2  # unset: the default is auto
    assert cli.runner_processes("") == 2


def test_auto_resolves_to_this_machines_cores() -> None:
    assert cli.runner_processes(None) == max(1, min(cli._cores(), cli.MAX_AUTO_RUNNER_PROCESSES))


def test_auto_is_bounded(monkeypatch) -> None:
    monkeypatch.setattr(cli, "_cores", lambda: 64)
    assert cli.runner_processes("auto") == cli.MAX_AUTO_RUNNER_PROCESSES == 8


def test_an_explicit_number_wins(monkeypatch) -> None:
    monkeypatch.setattr(cli, "_cores", lambda: 4)
    assert cli.runner_processes("1") == 1
    assert cli.runner_processes("12") == 12


@pytest.mark.parametrize("raw", ["two", "0", "65", "1.5"])
def test_a_bad_value_says_what_is_expected(raw: str) -> None:
    with pytest.raises(SystemExit, match="KONNECTZ_RUNNER_PROCESSES"):
        cli.runner_processes(raw)


def test_make_dev_passes_the_count_to_the_runner(monkeypatch, tmp_path) -> None:
    started: list[dict[str, str]] = []

    class Stop(Exception):
        pass

    def start(self) -> None:
        started.append(self.component_env())
        raise Stop

    monkeypatch.setattr(cli, "_cores", lambda: 3)
    monkeypatch.setattr(cli.Platform, "start", start)
    monkeypatch.setattr(cli.signal, "signal", lambda *_: None)  # leave pytest's handlers alone
    monkeypatch.delenv("KONNECTZ_RUNNER_PROCESSES", raising=False)
    with pytest.raises(Stop):
        cli.main(["--state-dir", str(tmp_path)])
    assert started[-1]["KONNECTZ_RUNNER_PROCESSES"] == "3"
    monkeypatch.setenv("KONNECTZ_RUNNER_PROCESSES", "1")
    with pytest.raises(Stop):
        cli.main(["--state-dir", str(tmp_path)])
    assert started[-1]["KONNECTZ_RUNNER_PROCESSES"] == "1"
