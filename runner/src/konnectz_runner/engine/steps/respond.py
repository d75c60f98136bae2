"""Runs the ``respond`` step; its config is :mod:`konnectz_contracts.steps.respond`.

The answer goes to the run's :data:`~konnectz_runner.engine.context.RESPONDER` (the worker's, for a
run whose caller waits); without one (Test & Review, a run not started by a waiting webhook) the step
records what it would have sent. In a called run (a Call a Flow step's, an MCP tool call's) the responder
keeps the answer (``keeps_result``): the output's ``result`` is the body, parsed when it is JSON, which
is the caller's result (docs/sub-flows.md).
"""

from __future__ import annotations

import json

from konnectz_contracts.limits import RESPONSE_MAX_BYTES
from konnectz_contracts.refs import resolve, resolve_value
from konnectz_contracts.responses import MAX_STATUS, MIN_STATUS, WebhookReply, content_type_of, too_large
from konnectz_contracts.steps.respond import Config, add_header, header_lines
from konnectz_runner.engine.context import RESPONDER, Outcome, StepContext

__all__ = ["EXCERPT_CHARS", "NOBODY_WAITS", "result_of", "run"]

#: The task log keeps this much of the body sent.
EXCERPT_CHARS = 2000
NOBODY_WAITS = "nobody waits for an answer: the run was not started by a webhook request held for it"
_NO_BODY = (204, 304)


def _excerpt(body: str) -> str:
    return body if len(body) <= EXCERPT_CHARS else body[:EXCERPT_CHARS] + f"… ({len(body)} characters)"


def _headers(config: Config, ctx: StepContext) -> dict[str, str]:
    """The headers with their references resolved; ValueError says what is wrong."""
    headers: dict[str, str] = {}
    for line in header_lines(config.header_lines):
        if isinstance(line, str):  # a reference to an object of headers
            value = resolve_value(line, ctx.outputs, ctx.warnings)
            if value in ("", None):
                continue
            if not isinstance(value, dict):
                raise ValueError(f"{line} is not an object of headers")
            pairs = [(str(k), v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in value.items()]
        else:
            pairs = [(line[0], resolve(line[1], ctx.outputs, ctx.warnings))]
        for name, text in pairs:
            if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in text):
                raise ValueError(f"the header {name} holds a line break or a control character")
            add_header(headers, name, text)
    return headers


async def run(config: Config, ctx: StepContext) -> Outcome:
    status_text = resolve(config.status, ctx.outputs, ctx.warnings).strip()
    body = resolve(config.body_template, ctx.outputs, ctx.warnings)
    size = len(body.encode("utf-8", "surrogatepass"))
    recorded: dict[str, object] = {"status": status_text, "body": _excerpt(body)}
    responder = RESPONDER.get()
    if not status_text.isdigit() or not MIN_STATUS <= int(status_text) <= MAX_STATUS:
        return Outcome.failed(
            f"The status {status_text!r} is not a number from {MIN_STATUS} to {MAX_STATUS}", input=recorded
        )
    status = int(status_text)
    try:
        headers = _headers(config, ctx)
    except ValueError as exc:
        return Outcome.failed(f"Headers: {exc}", input=recorded)
    recorded["headers"] = dict(headers)
    if size > RESPONSE_MAX_BYTES:
        reason = too_large(size)
        if responder is not None:  # the caller learns why, and the run ends as ERROR saying so
            await responder.send(WebhookReply.failed(ctx.run_id, 502, reason))
        return Outcome.failed(reason, input={**recorded, "bytes": size})
    if status in _NO_BODY:
        body = ""
    elif not any(name.lower() == "content-type" for name in headers):
        headers["Content-Type"] = content_type_of(body)
    reply = WebhookReply(run_id=ctx.run_id, status=status, headers=headers, body=body)
    not_sent = NOBODY_WAITS if responder is None else await responder.send(reply)
    output: dict[str, object] = {
        "sent": not_sent is None,
        "status": status,
        "headers": headers,
        "body": _excerpt(body),
        "bytes": len(body.encode("utf-8", "surrogatepass")),
    }
    if not_sent is not None:
        output["not_sent"] = not_sent
    elif getattr(responder, "keeps_result", False):  # a called run: its caller's result
        output["result"] = result_of(body)
    return Outcome(output=output, input=recorded)


def result_of(body: str) -> object:
    """A called run's result from its Respond body: the JSON value it holds, else the text."""
    try:
        return json.loads(body) if body.strip() else None
    except ValueError:
        return body
