from __future__ import annotations

import pytest

from konnectz_operator.errors import InvalidKonnect, UnsupportedKonnect
from konnectz_operator.validation import validate_konnect


def test_a_valid_webhook_konnect_returns_its_flow(konnect, token):
    parsed = validate_konnect(konnect())
    assert parsed.konnect_id == 42
    assert parsed.trigger.token == token


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda k: k["spec"].update(konnectId=43), "differs from spec.konnectId"),
        (lambda k: k["spec"].update(ownerId=8), "differs from spec.ownerId"),
        (lambda k: k["spec"].pop("flow"), "spec.flow must be an object"),
        (lambda k: k["spec"]["flow"].update(steps=[]), "spec.flow is not a valid flow spec: steps"),
        (lambda k: k["spec"]["flow"]["trigger"].update(token="short"), "trigger.webhook.token"),
        (lambda k: k["spec"]["flow"].update(extra=1), "extra"),
        (lambda k: k["spec"]["trigger"].update(kind="email"), "spec.trigger.kind must be"),
        (lambda k: k["spec"].update(trigger={"kind": "schedule"}), "spec.trigger.schedule"),
        (
            lambda k: k["spec"].update(trigger={"kind": "schedule", "schedule": "0 * * * *"}),
            "differs from spec.trigger.kind",
        ),
    ],
)
def test_invalid_konnects_say_what_is_wrong(konnect, mutate, message):
    k = konnect()
    mutate(k)
    with pytest.raises(InvalidKonnect) as info:
        validate_konnect(k)
    assert message in str(info.value)


def test_an_unknown_runner_mode_is_reported_as_unsupported(konnect):
    with pytest.raises(UnsupportedKonnect, match="runnerMode 'fleet'"):
        validate_konnect(konnect(runnerMode="fleet"))
    validate_konnect(konnect(runnerMode="shared"))  # the pool itself is checked when reconciling
