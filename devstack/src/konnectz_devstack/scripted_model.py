"""A scripted model server: OpenAI's chat-completions API with answers from a script, no model behind it.

It lets the tests and ``make dev AI=scripted`` use the Ask AI step (and, later, the Agent step) without a
key or a hosted model: every answer is deterministic, given by the script, a JSON document::

    {
      "model": "scripted-1",                 # what GET /models lists first (the default model)
      "rules": [                             # the first rule that matches the last message answers
        {"contains": "sentiment",            # a case-insensitive part of the last message's text ("" or absent: any)
         "role": "user",                     # optional: the last message's role (user, tool, ...)
         "model": "scripted-1",              # optional: the request's model
         "times": 1,                         # optional: the rule answers this many requests, then no longer matches
         "content": "{\\"sentiment\\": \\"positive\\"}",   # the answer's text ("{{prompt}}": the last message's text)
         "repeat": 1,                        # optional: the content repeated (a long answer)
         "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],   # optional: tool calls
         "finish_reason": "stop",            # optional ("tool_calls" when there are tool calls)
         "status": 429, "retry_after": 1,    # optional: an error reply instead (status, Retry-After seconds)
         "delay": 2.5,                       # optional: seconds to wait before answering (at most 60)
         "usage": {"prompt_tokens": 10, "completion_tokens": 3}}   # optional: else counted in words
      ],
      "turns": [ {...}, {...} ]              # replies (as rules, without matching) used in order when no rule matches
    }

When neither a rule nor a turn answers: a request asking for structured output (``response_format`` with a
``json_schema``) gets a JSON instance of the schema (enums' first value, ``"example"``, 1, true...), any
other gets ``"You said: <the last message's text>"``. Token counts, unless a rule gives them, are the words
of the request's messages and of the answer.

Routes: ``POST /v1/chat/completions`` (and ``/chat/completions``), ``GET /v1/models`` (and ``/models``),
and Anthropic's ``POST /v1/messages`` (the same script; see :meth:`ScriptedModel.answer_messages`);
with ``api_key`` set, a request without ``Authorization: Bearer <api_key>`` (or ``x-api-key``) gets 401.
Each chat request is kept in :attr:`ScriptedModel.requests` (its body and headers, the keys left out).

Run it alone: ``python -m konnectz_devstack.scripted_model --port 3000 [--script FILE] [--api-key KEY]``
(``make dev AI=scripted`` does, with :data:`DEFAULT_SCRIPT`). See docs/ai.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_SCRIPT", "ScriptedModel", "example_of", "main"]

#: The script of ``make dev AI=scripted``: a tool call to show an agent's loop, its follow-up, and the
#: defaults (an echo; an instance of a requested schema) for everything else.
DEFAULT_SCRIPT: dict[str, Any] = {
    "model": "scripted-1",
    "rules": [
        {
            "contains": "weather",
            "role": "user",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
        {"role": "tool", "content": "The tool says: {{prompt}}"},
    ],
}

MAX_KEPT_REQUESTS = 1000
MAX_BODY_BYTES = 4 * 1024 * 1024


def example_of(schema: Any, depth: int = 0) -> Any:
    """A JSON value valid against simple JSON Schemas (type, properties, items, enum, const, anyOf/oneOf)."""
    if not isinstance(schema, dict) or depth > 20:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example_of(schema[key][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties")
        if not isinstance(props, dict):
            return {}
        return {name: example_of(sub, depth + 1) for name, sub in props.items()}
    if kind == "array":
        return [example_of(schema.get("items"), depth + 1)] if isinstance(schema.get("items"), dict) else []
    if kind == "string":
        return "example"
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return True
    return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _words(text: str) -> int:
    return len(text.split())


class ScriptedModel:
    """The server, on ``port`` of ``host`` (0: a free one), answering from ``script``; :attr:`url` is the
    base URL an account takes (``http://127.0.0.1:<port>/v1``). Thread-safe: requests run in threads."""

    def __init__(
        self,
        script: dict[str, Any] | None = None,
        *,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._script: dict[str, Any] = {}
        self._turn = 0
        self.load(script or {})
        model = self
        handler = type("Handler", (_Handler,), {"model": model})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://{host}:{self.port}/v1"
        self._thread: threading.Thread | None = None

    def load(self, script: dict[str, Any]) -> None:
        """Answer from ``script`` from now on (its rules' ``times`` and its turns start afresh)."""
        with self._lock:
            self._script = copy.deepcopy(script)
            self._turn = 0

    def start(self) -> ScriptedModel:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- answering ------------------------------------------------------------------------------
    def models(self) -> list[str]:
        first = str(self._script.get("model") or "scripted-1")
        return list(dict.fromkeys([first, *[str(m) for m in self._script.get("models") or ()]]))

    def _matches(self, rule: dict[str, Any], text: str, role: str, model: str) -> bool:
        if str(rule.get("contains") or "").lower() not in text.lower():
            return False
        if rule.get("role") is not None and rule["role"] != role:
            return False
        if rule.get("model") is not None and rule["model"] != model:
            return False
        return rule.get("times") is None or int(rule["times"]) > 0

    def choose(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The rule or turn that answers ``body`` (its ``times`` counted down), None for the default."""
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
        text, role, model = _text(last.get("content")), str(last.get("role") or ""), str(body.get("model") or "")
        with self._lock:
            for rule in self._script.get("rules") or ():
                if isinstance(rule, dict) and self._matches(rule, text, role, model):
                    if rule.get("times") is not None:
                        rule["times"] = int(rule["times"]) - 1
                    return rule
            turns = self._script.get("turns") or []
            if self._turn < len(turns):
                self._turn += 1
                return dict(turns[self._turn - 1])
        return None

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """The status, JSON body and headers of the reply to a chat-completions request."""
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        if not messages or not isinstance(body.get("model"), str):
            return 400, {"error": {"message": "model and messages are required", "type": "invalid_request_error"}}, {}
        last = messages[-1] if isinstance(messages[-1], dict) else {}
        prompt = _text(last.get("content"))
        rule = self.choose(body)
        if rule is not None and rule.get("delay"):
            time.sleep(min(max(float(rule["delay"]), 0.0), 60.0))
        if rule is not None and rule.get("status"):
            headers = {"Retry-After": str(rule["retry_after"])} if rule.get("retry_after") is not None else {}
            kind = "rate_limit_exceeded" if rule["status"] == 429 else "scripted_error"
            return int(rule["status"]), {"error": {"message": f"scripted {rule['status']}", "type": kind}}, headers
        calls: list[dict[str, Any]] = []
        if rule is None:
            schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
            content = json.dumps(example_of(schema)) if isinstance(schema, dict) else f"You said: {prompt}"
        else:
            content = str(rule.get("content") or "").replace("{{prompt}}", prompt) * int(rule.get("repeat") or 1)
            for n, call in enumerate(rule.get("tool_calls") or ()):
                arguments = call.get("arguments", {})
                calls.append(
                    {
                        "id": f"call_{len(self.requests)}_{n}",
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                        },
                    }
                )
        finish = (rule or {}).get("finish_reason") or ("tool_calls" if calls else "stop")
        usage = {
            "prompt_tokens": sum(_words(_text(m.get("content"))) for m in messages if isinstance(m, dict)),
            "completion_tokens": max(1, _words(content)) if content or not calls else len(calls),
            **((rule or {}).get("usage") or {}),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        message: dict[str, Any] = {"role": "assistant", "content": content if content or not calls else None}
        if calls:
            message["tool_calls"] = calls
        reply = {
            "id": f"chatcmpl-scripted-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return 200, reply, {}

    def answer_messages(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """The reply to an Anthropic Messages API request (``POST /v1/messages``), answered by the same
        script: the request read as chat completions (``system`` first, a ``tool_result`` block as a ``tool``
        message), the answer written as content blocks. A forced tool (``tool_choice: {type: tool}``, how
        structured output is asked for) is called with the answer's JSON as its input (an instance of its
        ``input_schema`` when no rule or turn answers)."""
        messages: list[dict[str, Any]] = []
        if body.get("system"):
            messages.append({"role": "system", "content": _text(body["system"])})
        for message in body.get("messages") or ():
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            results = (
                [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
                if isinstance(content, list)
                else []
            )
            if results:
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": results[0].get("tool_use_id"),
                        "content": _text(results[0].get("content")),
                    }
                )
            else:
                messages.append({"role": str(message.get("role") or "user"), "content": _text(content)})
        chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
        choice = body.get("tool_choice")
        if not isinstance(choice, dict):
            choice = {}
        forced = choice.get("name") if choice.get("type") == "tool" else None
        tools = {t.get("name"): t for t in body.get("tools") or () if isinstance(t, dict)}
        if forced in tools:
            chat["response_format"] = {
                "type": "json_schema",
                "json_schema": {"schema": tools[forced].get("input_schema")},
            }
        status, reply, headers = self.answer(chat)
        if status != 200:
            kind = {429: "rate_limit_error", 401: "authentication_error", 400: "invalid_request_error"}.get(
                status, "api_error"
            )
            return status, {"type": "error", "error": {"type": kind, "message": reply["error"]["message"]}}, headers
        message = reply["choices"][0]["message"]
        blocks: list[dict[str, Any]] = []
        text = message.get("content") or ""
        if forced in tools:
            try:
                blocks.append(
                    {"type": "tool_use", "id": f"toolu_{len(self.requests)}", "name": forced, "input": json.loads(text)}
                )
            except ValueError:
                blocks.append({"type": "text", "text": text})
        elif text:
            blocks.append({"type": "text", "text": text})
        for call in message.get("tool_calls") or ():
            function = call["function"]
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": function["name"],
                    "input": json.loads(function["arguments"] or "{}"),
                }
            )
        finish = reply["choices"][0]["finish_reason"]
        stop = (
            "tool_use"
            if any(b["type"] == "tool_use" for b in blocks)
            else ("max_tokens" if finish == "length" else "end_turn")
        )
        usage = reply["usage"]
        return (
            200,
            {
                "id": f"msg_scripted_{len(self.requests)}",
                "type": "message",
                "role": "assistant",
                "model": reply["model"],
                "content": blocks,
                "stop_reason": stop,
                "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]},
            },
            {},
        )


class _Handler(BaseHTTPRequestHandler):
    model: ScriptedModel

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        key = self.model.api_key
        if key is None or key in (self.headers.get("x-api-key"), (self.headers.get("Authorization") or "")[7:]):
            return True
        self._reply(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
        return False

    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/") not in ("/v1/models", "/models"):
            self._reply(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        if self._authorised():
            data = [{"id": m, "object": "model", "owned_by": "konnectz-scripted"} for m in self.model.models()]
            self._reply(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        route = self.path.split("?")[0].rstrip("/")
        if route not in ("/v1/chat/completions", "/chat/completions", "/v1/messages", "/messages"):
            self._reply(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._reply(413, {"error": {"message": "request too large", "type": "invalid_request_error"}})
            return
        raw = self.rfile.read(length)
        if not self._authorised():
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._reply(400, {"error": {"message": "the body must be a JSON object", "type": "invalid_request_error"}})
            return
        kept = {k: v for k, v in self.headers.items() if k.lower() not in ("authorization", "x-api-key")}
        with self.model._lock:
            if len(self.model.requests) >= MAX_KEPT_REQUESTS:
                del self.model.requests[0]
            self.model.requests.append({"body": body, "headers": kept})
        self._reply(*(self.model.answer_messages(body) if route.endswith("/messages") else self.model.answer(body)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m konnectz_devstack.scripted_model", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--script", type=Path, help="a JSON script (default: the built-in one)")
    parser.add_argument("--api-key", default=None, help="require this bearer token")
    args = parser.parse_args(argv)
    script = json.loads(args.script.read_text()) if args.script else DEFAULT_SCRIPT
    server = ScriptedModel(script, api_key=args.api_key, host=args.host, port=args.port)
    print(f"scripted model on {server.url}", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
