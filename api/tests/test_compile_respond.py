"""Publishing compiles the Webhook's Respond setting and the Respond step, and refuses either one
without the other, naming the node to fix (docs/webhook-response.md)."""

from typing import Any

import pytest

from konnectz_api.compile.flow import CompileError, compile_flow
from konnectz_contracts.steps.respond import NEEDS_WEBHOOK, NO_RESPOND_STEP
from konnectz_contracts.triggers.webhook import WebhookTrigger
from konnectz_devstack.testing import canvas_node, chain_canvas


def canvas(respond: str, *, with_step: bool) -> dict[str, Any]:
    trigger = canvas_node(
        "node-1",
        "WebhookInner",
        "webhook",
        1,
        "Webhook",
        selectedAddonsValue={"respond": respond, "respond_timeout_seconds": 45},
    )
    responses = [{"config_key": "status", "value": "202"}, {"config_key": "body", "value": "{{node-1.a}}"}]
    second = (
        canvas_node("node-2", "ActionNode", "respond", 2, "Answer", configResponses=responses)
        if with_step
        else canvas_node(
            "node-2", "ActionNode", "hash", 2, "Hash", configResponses=[{"config_key": "text", "value": "x"}]
        )
    )
    return chain_canvas([trigger, second], "f")


def compiled(c: dict[str, Any]) -> Any:
    return compile_flow(c, konnect_id=7, owner_id=3, name="n", webhook_token="t" * 43)


def test_a_webhook_answered_by_a_respond_step_compiles() -> None:
    spec = compiled(canvas("step", with_step=True))
    assert spec.trigger == WebhookTrigger(token="t" * 43, respond="step", respond_timeout_seconds=45)
    (step,) = spec.steps
    assert (step.kind, step.status, step.body_template) == ("respond", "202", "{{node-1.a}}")
    assert compiled(canvas("when_done", with_step=False)).trigger.respond == "when_done"


@pytest.mark.parametrize(
    ("respond", "with_step", "message"),
    [
        ("at_once", True, f"Answer (node-2): {NEEDS_WEBHOOK}"),
        ("when_done", True, f"Answer (node-2): {NEEDS_WEBHOOK}"),
        ("step", False, f"Webhook (node-1): {NO_RESPOND_STEP}"),
    ],
)
def test_a_respond_step_without_a_webhook_answering_by_it_is_refused(
    respond: str, with_step: bool, message: str
) -> None:
    with pytest.raises(CompileError) as refused:
        compiled(canvas(respond, with_step=with_step))
    assert str(refused.value) == message
