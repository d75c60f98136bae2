"""The operator reads the contracts, not the runner: importing it loads neither the runner nor the
runner's heavy dependencies (its image does not carry them)."""

from __future__ import annotations

import json
import subprocess
import sys

# aiohttp is not in the list: kopf itself is built on it (kopf -> aiohttp), so the operator loads it
# whatever it imports from Konnectz.
HEAVY = ("konnectz_runner", "botocore", "babel", "opentelemetry", "uvicorn", "starlette", "prometheus_client")

_PROBE = """
import json, sys
import konnectz_operator
from konnectz_operator import apply, config, crd, drift, errors, handlers, pool, render, resolve, status, validation
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def test_importing_the_operator_loads_no_runner_module() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "konnectz_contracts" in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
