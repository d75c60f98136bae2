from __future__ import annotations

import kopf
import pytest

from konnectz_operator.apply import KubeError
from konnectz_operator.errors import to_kopf_error


def _exc(status: int, headers: dict[str, str] | None = None) -> KubeError:
    return KubeError(status=status, reason="Reason", headers=headers)


@pytest.mark.parametrize(("status", "delay"), [(500, 15.0), (503, 15.0), (429, 10.0)])
def test_server_errors_and_throttling_are_retried(status, delay):
    error = to_kopf_error(_exc(status))
    assert isinstance(error, kopf.TemporaryError)
    assert error.delay == delay


def test_retry_after_is_honoured():
    error = to_kopf_error(_exc(429, {"Retry-After": "42"}))
    assert isinstance(error, kopf.TemporaryError)
    assert error.delay == 42.0


@pytest.mark.parametrize("status", [400, 422])
def test_refused_children_are_permanent(status):
    exc = _exc(status)
    exc.body = '{"message": "Deployment.apps is invalid"}'
    error = to_kopf_error(exc)
    assert isinstance(error, kopf.PermanentError)
    assert "Deployment.apps is invalid" in str(error)


@pytest.mark.parametrize(("status", "delay"), [(403, 60.0), (404, 5.0), (409, 5.0)])
def test_rbac_and_races_are_retried(status, delay):
    error = to_kopf_error(_exc(status))
    assert isinstance(error, kopf.TemporaryError)
    assert error.delay == delay
