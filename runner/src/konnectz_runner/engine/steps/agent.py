"""Runs the ``agent`` step; its config is :mod:`konnectz_contracts.steps.agent` (docs/ai.md, "The Agent step").

The loop: the model is asked (instructions, the conversation's memory, the prompt, the tools' schemas);
while its reply asks for tools, each is called (:mod:`konnectz_runner.engine.steps._agent_tools`) and its result
handed back; its first reply without a tool call is the answer. Every model reply and every tool call is a
sub-step of the run's journal (``ctx.substeps``, keys ``<step>/model-<i>`` and ``<step>/tool-<i>-<j>``):
a tool call is marked as started before it runs and its result recorded after, so a redelivered run
replays the recorded replies and results and never calls a finished tool again; a tool call that started
but never finished (its runner was killed during it) is not repeated: the step ends saying so.

Bounds, each ending the step with an error that names it: ``max_iterations`` model calls, ``max_total_tokens``,
``max_seconds`` (per delivery; a sub-flow tool waits for its called run at most what is left of it, and an
MCP tool call too). A call of an unknown tool or with arguments that do not fit its schema is
answered to the model with the reason (a tool error it can correct); a second such call in the same step
ends it, naming the tool and the reason. A final answer over :data:`AI_ANSWER_MAX_BYTES` is cut with a note;
a tool result over :data:`AGENT_TOOL_RESULT_MAX_BYTES` is cut, with a note the model reads.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import time
from typing import Any

from konnectz_contracts.errors import StepError
from konnectz_contracts.limits import (
    AGENT_MEMORY_MAX_BYTES,
    AGENT_TOOL_RESULT_MAX_BYTES,
    AI_ANSWER_MAX_BYTES,
    AI_PROMPT_MAX_BYTES,
)
from konnectz_contracts.manifest import App
from konnectz_contracts.refs import resolve
from konnectz_contracts.steps.agent import MODEL_APPS, Config
from konnectz_contracts.steps.ask_ai import parse_schema
from konnectz_runner.apps import chat, memory_source
from konnectz_runner.engine.context import Outcome, StepContext, SubStepInDoubt
from konnectz_runner.engine.steps._agent_tools import (
    BadArguments,
    Bounds,
    Tool,
    ToolResult,
    build_tools,
    prepare_tools,
)
from konnectz_runner.engine.steps.app_event import catalogue, credential_source, record_waits
from konnectz_runner.engine.steps.ask_ai import ask

__all__ = ["run", "tool_call_key"]


def tool_call_key(run_id: str, step_id: str, item_index: int | None, name: str) -> str:
    """The ``Idempotency-Key`` of one tool call (the same on every delivery of the run)."""
    raw = f"{run_id}\x00{step_id}\x00{'' if item_index is None else item_index}\x00{name}"
    return "kz-" + hashlib.sha256(raw.encode()).hexdigest()[:40]


def _cut(text: str, limit: int) -> tuple[str, bool]:
    return chat.cut_answer(text, limit)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class _Loop:
    """One run of the step: its messages, counters and the tool calls the log shows."""

    def __init__(self, config: Config, ctx: StepContext, app: App, credentials: dict[str, Any], model: str) -> None:
        self.config = config
        self.ctx = ctx
        self.app = app
        self.credentials = credentials
        self.model = model
        self.iterations = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.calls: list[dict[str, Any]] = []
        self.turn: list[dict[str, Any]] = []  # what memory keeps of this run
        self.doing = "waiting for the model"
        self.waits: list[float] = []
        self.bad_calls = 0

    async def _reply(self, iteration: int, request: chat.ChatRequest) -> dict[str, Any]:
        """The model's reply of ``iteration``: recorded in an earlier delivery, or asked now (and recorded)."""
        name = f"model-{iteration}"
        substeps = self.ctx.substeps
        if substeps is not None:
            recorded = await substeps.recall(name)
            if recorded is not None:
                return dict(recorded)
        reply, sent = await ask(self.ctx, self.app, self.config.account_id, self.credentials, request, self.waits)
        value = {
            "text": reply.text,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
            "model": reply.model,
            "finish_reason": reply.finish_reason,
            "tokens_in": reply.tokens_in,
            "tokens_out": reply.tokens_out,
            "request": sent,
        }
        if substeps is not None:
            await substeps.record(name, value)
        return value

    async def _call(self, tool: Tool, arguments: dict[str, Any], iteration: int, index: int) -> dict[str, Any]:
        """One tool call, journaled: its recorded result, or the call made now (marked first, then recorded)."""
        name = f"tool-{iteration}-{index}"
        substeps = self.ctx.substeps
        if substeps is not None:
            try:
                recorded = await substeps.recall(name)
            except SubStepInDoubt:
                raise StepError(
                    f"The runner stopped while the tool {tool.name} ran (iteration {iteration}, call {index + 1}), so "
                    "it is not known whether it took effect. It was not called again, so that it cannot take effect "
                    "twice: check its target, then replay the run if needed."
                ) from None
            if recorded is not None:
                return {**recorded, "recalled": True}
            await substeps.begin(name)
        key = tool_call_key(self.ctx.run_id, self.config.id, self.ctx.item_index, name)
        started = time.perf_counter()
        result: ToolResult = await tool.call(arguments, dataclasses.replace(self.ctx, idempotency_key=key))
        value = {
            "output": result.output,
            "error": result.error,
            "detail": result.detail,
            "duration_ms": round((time.perf_counter() - started) * 1000),
            "idempotency_key": key,
        }
        if substeps is not None:
            await substeps.record(name, value)
        return value

    def _refuse(self, call: dict[str, Any], why: str) -> str:
        """A call the model got wrong: the reason handed back once; a second one ends the step."""
        self.bad_calls += 1
        if self.bad_calls > 1:
            raise StepError(f"The model called the tool {call['name']!r} wrongly again: {why}")
        return f"Error: {why}. Call one of the listed tools, with arguments that match its schema."

    async def tools_round(self, reply: dict[str, Any], iteration: int, tools: dict[str, Tool]) -> list[dict[str, Any]]:
        """Run the reply's tool calls in order: the tool messages handed back to the model."""
        answers: list[dict[str, Any]] = []
        for index, call in enumerate(reply["tool_calls"]):
            record: dict[str, Any] = {
                "id": call["id"],
                "tool": call["name"],
                "kind": None,
                "iteration": iteration,
                "input": call["arguments"],
                "output": None,
                "error": None,
                "duration_ms": 0,
            }
            tool = tools.get(call["name"])
            if tool is None:
                known = ", ".join(sorted(tools)) or "none"
                record["error"] = f"unknown tool {call['name']!r} (the tools are: {known})"
                self.calls.append(record)
                content = self._refuse(call, record["error"])
            else:
                record["kind"] = tool.kind
                try:
                    arguments = tool.check(call["arguments"])
                except BadArguments as exc:
                    record["error"] = f"malformed arguments for {tool.name}: {exc}"
                    self.calls.append(record)
                    content = self._refuse(call, record["error"])
                else:
                    self.doing = f"calling the tool {tool.name}"
                    done = await self._call(tool, arguments, iteration, index)
                    self.doing = "waiting for the model"
                    content = self._result_text(done)
                    record.update(
                        output=_logged(done.get("output")),
                        error=done.get("error"),
                        duration_ms=done.get("duration_ms", 0),
                        idempotency_key=done.get("idempotency_key"),
                    )
                    if done.get("detail"):
                        record["detail"] = done["detail"]
                    if done.get("recalled"):
                        record["recalled"] = True
                    self.calls.append(record)
            answers.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        return answers

    @staticmethod
    def _result_text(done: dict[str, Any]) -> str:
        if done.get("error"):
            return _as_text({"error": done["error"]})
        text = _as_text(done.get("output"))
        cut, truncated = _cut(text, AGENT_TOOL_RESULT_MAX_BYTES)
        if truncated:
            size = len(text.encode("utf-8"))
            shown = AGENT_TOOL_RESULT_MAX_BYTES // 1024
            cut += f"\n[cut: the result had {size} bytes; only the first {shown} KiB are shown]"
        return cut


def _logged(value: Any) -> Any:
    """A tool's output as the task log keeps it (a long one as its first 32 KiB of text)."""
    text = _as_text(value)
    if len(text.encode("utf-8")) <= AGENT_TOOL_RESULT_MAX_BYTES:
        return value
    cut, _ = _cut(text, AGENT_TOOL_RESULT_MAX_BYTES)
    return {"cut": cut, "bytes": len(text.encode("utf-8"))}


def _size(messages: list[dict[str, Any]]) -> int:
    return len(json.dumps(messages, ensure_ascii=False).encode())


def _for_memory(turn: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None]:
    """The turn as memory keeps it (at most :data:`AGENT_MEMORY_MAX_BYTES`): whole when it fits; else its
    tool results replaced by a note (the calls stay, each with a result); else the prompt and the answer."""
    if _size(turn) <= AGENT_MEMORY_MAX_BYTES:
        return turn, None
    limit = AGENT_MEMORY_MAX_BYTES // 1024
    cut = [
        {**m, "content": f"[not kept in memory: {len(str(m.get('content', '')).encode())} bytes]"}
        if m.get("role") == "tool"
        else m
        for m in turn
    ]
    if _size(cut) <= AGENT_MEMORY_MAX_BYTES:
        return cut, f"This turn was over {limit} KiB: memory keeps its tool calls without their results' text"
    ends = [turn[0], {**turn[-1], "content": chat.cut_answer(str(turn[-1].get("content") or ""), 64 * 1024)[0]}]
    return ends, f"This turn was over {limit} KiB: memory keeps only its prompt and answer"


def _wire_tools(tools: dict[str, Tool]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters()}}
        for t in tools.values()
    ]


def _call_ids(reply: dict[str, Any], iteration: int) -> None:
    """Tool call ids the model left empty or repeated are named (the results must say which call they answer)."""
    seen: set[str] = set()
    for index, call in enumerate(reply["tool_calls"]):
        if not call["id"] or call["id"] in seen:
            call["id"] = f"call_{iteration}_{index + 1}"
        seen.add(call["id"])


async def _loop(loop: _Loop, messages: list[dict[str, Any]], tools: dict[str, Tool], schema: Any) -> dict[str, Any]:
    config = loop.config
    wire = _wire_tools(tools)
    anthropic = loop.app.key in chat.ANTHROPIC_APPS
    for iteration in range(1, config.max_iterations + 1):
        request = chat.ChatRequest(
            model=loop.model,
            messages=messages,
            temperature=config.temperature,
            # Anthropic's structured output forces one tool: with tools, the schema is in the instructions
            json_schema=schema if schema is not None and not (anthropic and wire) else None,
            tools=wire,
        )
        reply = await loop._reply(iteration, request)
        loop.iterations = iteration
        loop.tokens_in += reply.get("tokens_in") or 0
        loop.tokens_out += reply.get("tokens_out") or 0
        used = loop.tokens_in + loop.tokens_out
        if config.max_total_tokens is not None and used > config.max_total_tokens:
            raise StepError(
                f"The agent used {used} tokens in {iteration} iterations, over its limit of {config.max_total_tokens} "
                "(Max total tokens): it was stopped without a final answer"
            )
        if not reply["tool_calls"]:
            return reply
        if iteration == config.max_iterations:
            asked = ", ".join(c["name"] for c in reply["tool_calls"])
            raise StepError(
                f"The agent reached its limit of {config.max_iterations} iterations (Max iterations) without a final "
                f"answer: its last reply still asked for tools ({asked[:300]}), which were not called"
            )
        _call_ids(reply, iteration)
        assistant = {
            "role": "assistant",
            "content": reply["text"] or None,
            "tool_calls": [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": _as_text(c["arguments"])},
                }
                for c in reply["tool_calls"]
            ],
        }
        messages.append(assistant)
        loop.turn.append(assistant)
        answers = await loop.tools_round(reply, iteration, tools)
        messages.extend(answers)
        loop.turn.extend(answers)
    raise AssertionError("unreachable")  # the last iteration returns or raises


def _instructions(config: Config, text: str, schema: Any) -> str:
    if schema is None:
        return text
    rule = "Give your final answer as JSON only, valid against this JSON Schema: " + json.dumps(schema)
    return f"{text}\n\n{rule}" if text else rule


async def run(config: Config, ctx: StepContext) -> Outcome:
    warnings: list[str] = []
    instructions = resolve(config.instructions, ctx.outputs, warnings)
    prompt = resolve(config.prompt, ctx.outputs, warnings)
    model = resolve(config.model, ctx.outputs, warnings).strip()
    key = resolve(config.conversation_key, ctx.outputs, warnings).strip()[:500] if config.conversation_key else ""
    recorded: dict[str, Any] = {
        "model": model,
        **({"instructions": instructions} if instructions else {}),
        "prompt": prompt,
        "tools": [{"name": t.name, "kind": t.kind} for t in config.tools],
        "limits": {
            "max_iterations": config.max_iterations,
            "max_total_tokens": config.max_total_tokens,
            "max_seconds": config.max_seconds,
        },
        **({"conversation_key": key} if key else {}),
    }
    app: App | None = None
    loop: _Loop | None = None
    try:
        schema = parse_schema(config.json_schema)
        if schema is not None:
            chat.check_schema(schema)
        if len(instructions.encode("utf-8")) + len(prompt.encode("utf-8")) > AI_PROMPT_MAX_BYTES:
            raise StepError(f"The instructions and prompt are longer than {AI_PROMPT_MAX_BYTES // 1024} KiB")
        if not prompt.strip():
            raise StepError("The prompt is empty (its references resolved to nothing)")
        if not model:
            raise StepError("The model is empty")
        if config.conversation_key and not key:
            raise StepError("The conversation key is empty (its references resolved to nothing)")
        app = catalogue().get(config.app_id)
        if app is None or config.app_id not in MODEL_APPS:
            raise StepError(f"App {config.app_id} is not a model provider an agent can use")
        if config.account_id is None:
            raise StepError(f"Choose a {app.name} account for the agent's model")
        bounds = Bounds(step_id=config.id, deadline=time.monotonic() + config.max_seconds)
        tools = build_tools(config.tools, ctx, warnings, bounds)
        credentials = await credential_source()(config.account_id, ctx.konnect_id, ctx.owner_id, False)
        await prepare_tools(tools, ctx)  # MCP tools: their servers' listings (bounded on their own)
        turn_key = tool_call_key(ctx.run_id, config.id, ctx.item_index, "turn")
        remember = bool(key) and ctx.remember
        history = await memory_source().load(ctx.konnect_id, key, turn_key) if remember else []
        system = _instructions(config, instructions, schema)
        user = {"role": "user", "content": prompt}
        messages = [*([{"role": "system", "content": system}] if system else []), *history, user]
        loop = _Loop(config, ctx, app, credentials, model)
        loop.turn.append(user)
        try:
            async with asyncio.timeout(config.max_seconds):
                final = await _loop(loop, messages, tools, schema)
        except TimeoutError:
            raise StepError(
                f"The agent reached its time limit of {config.max_seconds} s (Max seconds) after "
                f"{loop.iterations} iterations, while {loop.doing}"
                + (" (it is not known whether that tool call took effect)" if loop.doing.startswith("calling") else "")
            ) from None
        answer, truncated = _cut(final["text"], AI_ANSWER_MAX_BYTES)
        output: dict[str, Any] = {
            "answer": answer,
            "data": None,
            "iterations": loop.iterations,
            "tokens_in": loop.tokens_in,
            "tokens_out": loop.tokens_out,
            "tool_calls": loop.calls,
            "model": final.get("model") or model,
            "finish_reason": final.get("finish_reason"),
            "truncated": truncated,
            "conversation_key": key,
        }
        if truncated:
            output["note"] = (
                f"The answer was cut at {AI_ANSWER_MAX_BYTES // 1024} KiB (it had "
                f"{len(final['text'].encode('utf-8'))} bytes)"
            )
            warnings.append(output["note"])
        if schema is not None:
            if truncated:
                raise StepError(f"{output['note']}; a structured answer cut short is not valid JSON")
            output["data"] = chat.check_answer(final["text"], schema, app.name)
        loop.turn.append({"role": "assistant", "content": answer})
        if remember:
            kept, note = _for_memory(loop.turn)
            if note:
                warnings.append(note)
            await memory_source().save(ctx.konnect_id, key, turn_key, kept)
    except StepError as exc:
        partial = None
        if loop is not None:  # what the agent did before it stopped: the task log shows its tool calls
            partial = {
                "iterations": loop.iterations,
                "tokens_in": loop.tokens_in,
                "tokens_out": loop.tokens_out,
                "tool_calls": loop.calls,
            }
        failed = Outcome.from_error(exc, input={**recorded, **_warned(warnings)}, output=partial)
        return record_waits(failed, app, config.account_id, loop.waits if loop is not None else [])
    outcome = Outcome(status="SUCCESS", output=output, input={**recorded, **_warned(warnings)})
    return record_waits(outcome, app, config.account_id, loop.waits)


def _warned(warnings: list[str]) -> dict[str, Any]:
    return {"warnings": warnings} if warnings else {}
