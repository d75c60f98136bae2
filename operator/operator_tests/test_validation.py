from __future__ import annotations

import pytest

from konnectz_operator.errors import InvalidKonnect, UnsupportedKonnect
from konnectz_operator.validation import validate_konnect


def test_a_valid_webhook_konnect_returns_its_flow(konnect, token):
    parsed = validate_konnect(konnect(), token)  # the token comes from the Konnect's Secret
    assert parsed.konnect_id == 42 and parsed.owner_id == 7  # from the spec
    assert parsed.trigger.token == token
    with pytest.raises(InvalidKonnect, match=r"trigger\.webhook\.token"):
        validate_konnect(konnect())  # no token: a webhook cannot run


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda k: k["spec"].pop("flow"), "spec.flow must be an object"),
        (lambda k: k["spec"]["flow"].update(steps=[]), "spec.flow is not a valid flow spec: steps"),
        (lambda k: k["spec"]["flow"].update(extra=1), "extra"),
        (lambda k: k["spec"]["trigger"].update(kind="email"), "spec.trigger.kind must be"),
        (lambda k: k["spec"].update(trigger={"kind": "schedule"}), "spec.trigger.schedule"),
        (
            lambda k: k["spec"].update(trigger={"kind": "schedule", "schedule": "0 * * * *"}),
            "differs from spec.trigger.kind",
        ),
    ],
)
def test_invalid_konnects_say_what_is_wrong(konnect, token, mutate, message):
    k = konnect()
    mutate(k)
    with pytest.raises(InvalidKonnect) as info:
        validate_konnect(k, token)
    assert message in str(info.value)


def test_an_unknown_runner_mode_is_reported_as_unsupported(konnect, token):
    with pytest.raises(UnsupportedKonnect, match="runnerMode 'fleet'"):
        validate_konnect(konnect(runnerMode="fleet"), token)
    validate_konnect(konnect(runnerMode="shared"), token)  # the pool itself is checked when reconciling
