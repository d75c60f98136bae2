"""Runs the ``ask_ai`` step; its config is :mod:`konnectz_contracts.steps.ask_ai` (``docs/ai.md``).

One chat completion through the app account: the app (its base URL and auth) from the runner's catalogue,
the credentials from the credential source (the api's broker), the request built by
:mod:`konnectz_runner.apps.chat` and sent as app requests are (:func:`~.app_event.send_paced`: the outbound
guard, a token of the account's rate budget per attempt, 429 retried honouring ``Retry-After``); an error
status is an :class:`~konnectz_contracts.errors.HttpFailed`, which the step's error policy may retry.

:func:`ask` is the part the Agent step reuses: one request, one parsed reply, what the log may show.
"""

from __future__ import annotations

from typing import Any

from konnectz_contracts.errors import HttpFailed, StepError
from konnectz_contracts.limits import AI_ANSWER_MAX_BYTES, AI_PROMPT_MAX_BYTES
from konnectz_contracts.manifest import App
from konnectz_contracts.refs import resolve
from konnectz_contracts.steps.ask_ai import Config, parse_schema
from konnectz_runner.apps import chat, outbound, secret_values
from konnectz_runner.engine.context import Outcome, StepContext
from konnectz_runner.engine.steps.app_event import catalogue, credential_source, record_waits, send_paced

__all__ = ["ask", "run"]


async def ask(
    ctx: StepContext,
    app: App,
    account_id: int | None,
    credentials: dict[str, Any],
    request: chat.ChatRequest,
    waits: list[float] | None = None,
) -> tuple[chat.ChatReply, dict[str, Any]]:
    """One chat completion of ``app``'s account: the reply, and the request as the log may show it (its
    method, URL and status; credentials are never in it)."""
    built = chat.build_chat_request(app, credentials, request)
    response, raw = await send_paced(ctx, app, built, account_id, waits)
    recorded = {"method": built.method, "url": built.url, "status": response.status_code}
    if response.status_code >= 400:
        text = raw.decode(response.encoding or "utf-8", errors="replace")[: outbound.ERROR_BODY_CHARS]
        for secret in secret_values(app, credentials):
            text = text.replace(secret, outbound.REDACTED)
        raise HttpFailed(
            f"HTTP {response.status_code} from {app.name} (Ask AI): {text}",
            response.status_code,
            outbound.retry_after_seconds(response),
        )
    return chat.parse_reply(app, outbound.parse_body(response, raw)), recorded


async def run(config: Config, ctx: StepContext) -> Outcome:
    warnings: list[str] = []  # references that resolved to nothing, an answer cut short
    system = resolve(config.system, ctx.outputs, warnings)
    prompt = resolve(config.prompt, ctx.outputs, warnings)
    model = resolve(config.model, ctx.outputs, warnings).strip()
    recorded: dict[str, Any] = {
        "model": model,
        **({"system": system} if system else {}),
        "prompt": prompt,
        **({"temperature": config.temperature} if config.temperature is not None else {}),
        **({"max_tokens": config.max_tokens} if config.max_tokens is not None else {}),
    }
    waits: list[float] = []
    app: App | None = None
    try:
        schema = parse_schema(config.json_schema)
        if schema is not None:
            chat.check_schema(schema)
            recorded["json_schema"] = schema
        if len(system.encode("utf-8")) + len(prompt.encode("utf-8")) > AI_PROMPT_MAX_BYTES:
            raise StepError(f"The prompt is longer than {AI_PROMPT_MAX_BYTES // 1024} KiB (with its references)")
        if not prompt.strip():
            raise StepError("The prompt is empty (its references resolved to nothing)")
        if not model:
            raise StepError("The model is empty")
        app = catalogue().get(config.app_id)
        if app is None:
            raise StepError(f"Unknown app {config.app_id}")
        if config.account_id is None:
            raise StepError(f"Choose a {app.name} account for this step")
        credentials = await credential_source()(config.account_id, ctx.konnect_id, ctx.owner_id, False)
        messages = [*([{"role": "system", "content": system}] if system else []), {"role": "user", "content": prompt}]
        request = chat.ChatRequest(
            model=model,
            messages=messages,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            json_schema=schema,
        )
        reply, sent = await ask(ctx, app, config.account_id, credentials, request, waits)
        recorded["request"] = sent
        answer, truncated = chat.cut_answer(reply.text, AI_ANSWER_MAX_BYTES)
        output: dict[str, Any] = {
            "answer": answer,
            "data": None,
            "model": reply.model or model,
            "tokens_in": reply.tokens_in,
            "tokens_out": reply.tokens_out,
            "cost_usd": chat.cost_usd(sent["url"], reply.model or model, reply.tokens_in, reply.tokens_out),
            "finish_reason": reply.finish_reason,
            "truncated": truncated,
        }
        if truncated:
            output["note"] = (
                f"The answer was cut at {AI_ANSWER_MAX_BYTES // 1024} KiB (it had {len(reply.text.encode('utf-8'))} "
                "bytes): ask for a shorter one, or set Max Tokens"
            )
            warnings.append(output["note"])
        if schema is not None:
            if truncated:
                raise StepError(f"{output['note']}; a structured answer cut short is not valid JSON")
            output["data"] = chat.check_answer(reply.text, schema, app.name)
    except StepError as exc:
        failed = Outcome.from_error(exc, input={**recorded, **_warned(warnings)})
        return record_waits(failed, app, config.account_id, waits)
    return record_waits(
        Outcome(status="SUCCESS", output=output, input={**recorded, **_warned(warnings)}), app, config.account_id, waits
    )


def _warned(warnings: list[str]) -> dict[str, Any]:
    return {"warnings": warnings} if warnings else {}
