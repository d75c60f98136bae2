"""tools/rewrite_imports.py: old runner imports become contracts/facade imports, once."""

# rewrite_imports: skip

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("rewrite_imports", REPO / "tools" / "rewrite_imports.py")
assert _spec is not None and _spec.loader is not None
rewrite_imports = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rewrite_imports)

OLD = '''"""Uses :class:`konnectz_runner.spec.FlowSpec` and ``konnectz_runner.events.RunRequest``."""
from konnectz_runner.events import KV_KONNECTS, ensure_streams, konnect_key  # noqa: F401
from konnectz_runner.model import KeyValue, StepContext
from konnectz_runner.steps import coupon, delay
from konnectz_runner.triggers.schedule import (
    next_fire,
    trigger_output as output,
)


def f():
    from konnectz_runner.netguard import NetGuard, outbound_transport

    return coupon.INVALID_EXPIRY, delay.UNIT_IDS[514], delay.run, NetGuard, outbound_transport
'''


def test_api_file_is_rewritten_to_contracts_and_the_facade(tmp_path: Path) -> None:
    path = tmp_path / "api" / "src" / "mod.py"
    path.parent.mkdir(parents=True)
    path.write_text(OLD)
    new = rewrite_imports.rewrite(path)
    assert "from konnectz_contracts.events import KV_KONNECTS, konnect_key  # noqa: F401" in new
    assert "from konnectz_runner.bus import ensure_streams  # noqa: F401" in new
    assert "from konnectz_contracts.model import KeyValue\nfrom konnectz_runner.engine import StepContext" in new
    # coupon is used only for config names; delay for both (its config names come from delay_config).
    assert (
        "from konnectz_contracts.steps import coupon, delay as delay_config\n"
        "from konnectz_runner.engine.steps import delay" in new
    )
    assert "delay_config.UNIT_IDS[514], delay.run" in new
    assert "from konnectz_contracts.triggers.schedule import next_fire, trigger_output as output" in new
    assert "    from konnectz_runner.apps import NetGuard\n    from konnectz_runner.bus import outbound_transport" in (
        new
    )
    assert ":class:`konnectz_contracts.spec.FlowSpec`" in new and "konnectz_contracts.events.RunRequest" in new
    path.write_text(new)
    assert rewrite_imports.rewrite(path) == new  # idempotent


def test_runner_files_keep_their_submodule_imports_within_a_room(tmp_path: Path) -> None:
    old = "from konnectz_runner.netguard import NetGuard\nfrom konnectz_runner.errors import StepError\n"
    inside = tmp_path / "runner" / "src" / "konnectz_runner" / "apps" / "mod.py"
    inside.parent.mkdir(parents=True)
    inside.write_text(old)
    assert rewrite_imports.rewrite(inside) == (
        "from konnectz_runner.apps.netguard import NetGuard\nfrom konnectz_contracts.errors import StepError\n"
    )
    # Outside the room (another room, or the top of the package): its face.
    outside = tmp_path / "runner" / "src" / "konnectz_runner" / "work" / "mod.py"
    outside.parent.mkdir(parents=True)
    outside.write_text(old)
    assert rewrite_imports.rewrite(outside).startswith("from konnectz_runner.apps import NetGuard\n")


ROOMS_OLD = '''"""Runs :func:`konnectz_runner.engine.execute` (``runner/src/konnectz_runner/engine.py``), see
``runner/.../worker.py`` and ``runner/src/konnectz_runner/steps/hash.py``; patches
``konnectz_runner.worker.publish_event`` and ``konnectz_runner.engine._paths``."""
from konnectz_runner import outbound
from konnectz_runner.active import mark, wake as wake_run
from konnectz_runner.engine import Suspended, _paths
from konnectz_runner.steps import app_event
from konnectz_runner.worker import RunWorker
from konnectz_runner import RUNS_FAILED, Settings, publish_run
'''


def test_old_flat_runner_modules_become_rooms_and_faces(tmp_path: Path) -> None:
    path = tmp_path / "runner" / "src" / "konnectz_runner" / "clock" / "mod.py"
    path.parent.mkdir(parents=True)
    path.write_text(ROOMS_OLD)
    new = rewrite_imports.rewrite(path)
    assert new == (
        '"""Runs :func:`konnectz_runner.engine.execute` (``runner/src/konnectz_runner/engine/flow.py``), see\n'
        "``runner/.../work/worker.py`` and ``runner/src/konnectz_runner/engine/steps/hash.py``; patches\n"
        '``konnectz_runner.work.worker.publish_event`` and ``konnectz_runner.engine.flow._paths``."""\n'
        "from konnectz_runner.apps import outbound\n"  # a module the apps face names
        "from konnectz_runner.bus import mark_active as mark, wake_waiting as wake_run\n"  # the face's names
        "from konnectz_runner.engine import Suspended\nfrom konnectz_runner.engine.flow import _paths\n"
        "from konnectz_runner.engine import app_event\n"
        "from konnectz_runner.work import RunWorker\n"
        "from konnectz_runner import RUNS_FAILED\nfrom konnectz_runner.config import Settings\n"
        "from konnectz_runner.bus import publish_run\n"
    )
    path.write_text(new)
    assert rewrite_imports.rewrite(path) == new  # idempotent


def test_the_tree_is_rewritten_already() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "rewrite_imports.py"), "--check",
         *(str(REPO / d) for d in ("api", "contracts", "runner", "operator", "devstack", "tests", "docs"))],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
