"""The captcha solver of the CLI and tests: one process or split over several, same valid payload."""

from __future__ import annotations

import altcha
import pytest

from konnectz_api.core.config import get_settings
from konnectz_api.services import captcha


@pytest.mark.parametrize("workers", [1, 2])
def test_solve_gives_a_payload_the_server_accepts(workers: int) -> None:
    settings = get_settings().model_copy(update={"captcha_cost": 50, "captcha_max_number": 400})
    challenge = captcha.new_challenge(settings)
    payload = captcha.solve(challenge, workers=workers)
    hmac_secret, hmac_key_secret = captcha._keys(settings)
    result = altcha.verify_solution(altcha.Payload.from_base64(payload), hmac_secret, hmac_key_secret=hmac_key_secret)
    assert result.verified


def test_a_tampered_solution_is_refused() -> None:
    settings = get_settings().model_copy(update={"captcha_cost": 50, "captcha_max_number": 400})
    payload = altcha.Payload.from_base64(captcha.solve(captcha.new_challenge(settings)))
    payload.solution.derived_key = "00" * 32
    hmac_secret, hmac_key_secret = captcha._keys(settings)
    assert not altcha.verify_solution(payload, hmac_secret, hmac_key_secret=hmac_key_secret).verified
