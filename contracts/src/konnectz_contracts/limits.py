"""The size and depth limits of what Konnectz accepts and stores: one place, below what NATS can hold.

Every accepted request becomes a message in JetStream, so each limit sits under the one after it:

- a trigger's **body** (what the sender sends; refused with 413 before anything is stored):
  :data:`WEBHOOK_MAX_BYTES` (webhooks, app webhooks and captures; ``KONNECTZ_MAX_BODY_BYTES``) and
  :data:`FORM_MAX_BYTES` (hosted forms; ``KONNECTZ_MAX_FORM_BYTES``);
- its **nesting**: at most :data:`MAX_JSON_DEPTH` levels of objects and arrays (400 beyond);
- the **stored run** (the RunRequest as JSON, which can be larger than the body: a form's ``%01``
  becomes ``\\u0001``): at most :data:`RUN_MAX_BYTES`, the ``KZ_RUNS`` stream's ``max_msg_size``
  (413 beyond, before anything is stored);
- the **task event** of a finished run (its request plus every step's input and output): at most
  :data:`EVENT_MAX_BYTES`, ``KZ_EVENTS``' ``max_msg_size``. A larger event is trimmed (the largest
  values replaced by a note saying why, the step list and statuses kept) by
  :func:`konnectz_contracts.events.fit_event`;
- NATS' **max_payload** (:data:`NATS_MAX_PAYLOAD`), set in the server configuration of the dev stack,
  the tests and the chart, is above all of them.

The api checks every JSON request body against :data:`API_MAX_JSON_DEPTH` (its documents, canvas_json
included, may hold a trigger's sample data a few levels down) and ``KONNECTZ_MAX_REQUEST_BYTES``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AGENT_MEMORY_MAX_BYTES",
    "AGENT_MEMORY_MAX_TURNS",
    "AGENT_TOOL_RESULT_MAX_BYTES",
    "AI_ANSWER_MAX_BYTES",
    "AI_PROMPT_MAX_BYTES",
    "AI_SCHEMA_MAX_BYTES",
    "API_MAX_JSON_DEPTH",
    "CALL_RESULT_MAX_BYTES",
    "CAPTURE_MSG_MAX_BYTES",
    "EVAL_CASES_MAX",
    "EVAL_CASE_SECONDS",
    "EVAL_CHECKS_MAX",
    "EVAL_INPUT_MAX_BYTES",
    "EVAL_PATTERN_MAX_CHARS",
    "EVAL_RUNS_PER_ACCOUNT",
    "EVAL_RUN_SECONDS",
    "EVAL_VALUE_MAX_BYTES",
    "EVENTS_MAX_AGE_SECONDS",
    "EVENTS_MAX_BYTES",
    "EVENT_MAX_BYTES",
    "FORM_MAX_BYTES",
    "KV_DEFAULT_MAX_BYTES",
    "KV_MAX_BYTES",
    "MAX_CALL_DEPTH",
    "MAX_JSON_DEPTH",
    "MCP_ARGUMENTS_MAX_BYTES",
    "MCP_LIST_MAX_BYTES",
    "MCP_REPLY_MAX_BYTES",
    "NATS_MAX_PAYLOAD",
    "RESPONSE_MAX_BYTES",
    "RUNS_MAX_AGE_SECONDS",
    "RUN_MAX_BYTES",
    "WEBHOOK_MAX_BYTES",
    "TooDeep",
    "check_depth",
    "kv_max_bytes",
]

KIB = 1024
MIB = 1024 * KIB

#: Body of a webhook, an app webhook or a captured request (``KONNECTZ_MAX_BODY_BYTES``).
WEBHOOK_MAX_BYTES = 1 * MIB
#: Body of a webhook's answer sent from its run (a Respond step's, or the run's output when it ends):
#: the ingress's own limit, sent over core NATS (below NATS_MAX_PAYLOAD). A larger one is a 502.
RESPONSE_MAX_BYTES = WEBHOOK_MAX_BYTES
#: Body of a hosted form's submission (``KONNECTZ_MAX_FORM_BYTES``).
FORM_MAX_BYTES = 256 * KIB
#: Levels of JSON objects and arrays in a trigger's data.
MAX_JSON_DEPTH = 64
#: Levels of JSON objects and arrays in a request body of the api (canvas_json holds sample data).
API_MAX_JSON_DEPTH = 128

#: Ask AI (:mod:`konnectz_contracts.steps.ask_ai`): a prompt (system and user message together, references
#: resolved) longer than this fails the step; an answer longer than this is cut (with a note in the output
#: and the task log); a JSON schema for structured output larger than this is refused by the compiler.
#: All three sit well under :data:`EVENT_MAX_BYTES`, so one Ask AI step cannot crowd a task event.
AI_PROMPT_MAX_BYTES = 256 * KIB
AI_ANSWER_MAX_BYTES = 256 * KIB
AI_SCHEMA_MAX_BYTES = 32 * KIB
#: The Agent step (:mod:`konnectz_contracts.steps.agent`, docs/ai.md): a tool's result handed back to the
#: model longer than this is cut (with a note the model reads); a conversation's memory keeps at most
#: this many turns (one turn = one run of the step: its prompt, tool calls, results and answer) and this
#: many bytes, the oldest whole turns dropped first (a tool call is never kept without its result).
AGENT_TOOL_RESULT_MAX_BYTES = 32 * KIB
AGENT_MEMORY_MAX_TURNS = 50
AGENT_MEMORY_MAX_BYTES = 512 * KIB

#: Call a flow (:mod:`konnectz_contracts.steps.call_flow`, docs/sub-flows.md): a chain of flows calling flows
#: is at most this many calls deep (A calls B calls C ... : 5 calls, 6 flows); publishing refuses a deeper
#: chain, and a run started deeper (flows republished meanwhile) fails its Call a Flow step.
MAX_CALL_DEPTH = 5
#: The result a called flow hands back to a waiting caller (its Respond body, or its last step's output), as
#: JSON: a larger one fails the caller's step saying so (it rides in the caller's stored run).
CALL_RESULT_MAX_BYTES = 256 * KIB

#: The MCP tool step (:mod:`konnectz_contracts.steps.mcp_tool`): a tool's reply (one HTTP response body)
#: larger than this fails the step (well under :data:`EVENT_MAX_BYTES`: the output is in a task event);
#: a server's tool list (one response body) larger than this is refused; the arguments, references
#: resolved, larger than this fail the step.
MCP_REPLY_MAX_BYTES = 1 * MIB
MCP_LIST_MAX_BYTES = 2 * MIB
MCP_ARGUMENTS_MAX_BYTES = 256 * KIB

#: Evaluations (the api's ``services/evaluations.py``, docs/ai.md): a flow's evaluation set holds at most
#: :data:`EVAL_CASES_MAX` cases, each with an input (the trigger's output for the case) of at most
#: :data:`EVAL_INPUT_MAX_BYTES` as JSON (and :data:`MAX_JSON_DEPTH` levels) and at most
#: :data:`EVAL_CHECKS_MAX` checks; a check's expected value (equals, contains, a JSON schema) is at most
#: :data:`EVAL_VALUE_MAX_BYTES` as JSON, a ``matches`` pattern at most :data:`EVAL_PATTERN_MAX_CHARS`
#: characters (run by the ``regex`` engine with a timeout). A case runs at most :data:`EVAL_CASE_SECONDS`,
#: a whole run at most :data:`EVAL_RUN_SECONDS`; an account runs at most :data:`EVAL_RUNS_PER_ACCOUNT`
#: evaluations at once.
EVAL_CASES_MAX = 200
EVAL_INPUT_MAX_BYTES = 64 * KIB
EVAL_CHECKS_MAX = 20
EVAL_VALUE_MAX_BYTES = 32 * KIB
EVAL_PATTERN_MAX_CHARS = 1000
EVAL_CASE_SECONDS = 60
EVAL_RUN_SECONDS = 300
EVAL_RUNS_PER_ACCOUNT = 2

#: One stored run (``KZ_RUNS`` max_msg_size).
RUN_MAX_BYTES = 2 * MIB
#: One task event (``KZ_EVENTS`` max_msg_size).
EVENT_MAX_BYTES = 4 * MIB
#: One captured request (``KZ_CAPTURES`` max_msg_size).
CAPTURE_MSG_MAX_BYTES = 2 * MIB
#: NATS' max_payload: above every stream's max_msg_size.
NATS_MAX_PAYLOAD = 8 * MIB

#: ``KZ_RUNS`` (a run is purged by its worker's sweep once acknowledged, konnectz_runner.work.worker) keeps a run at
#: most this long (a delay waits at most 366 days). It has no max_bytes: NATS refuses message schedules
#: (the delays' timers) on a stream that discards new messages, and discarding old ones would delete
#: accepted runs. Its size is bounded by back-pressure instead: a runner answers 429 past
#: ``KONNECTZ_MAX_QUEUED_RUNS`` waiting runs of at most RUN_MAX_BYTES each, and NATS refuses new runs
#: (503 with Retry-After) when its JetStream store (``max_file_store``) is full.
RUNS_MAX_AGE_SECONDS = 400 * 24 * 3600
#: ``KZ_EVENTS`` (interest retention: an event is deleted when the api stored its task log): at most
#: this much waiting and this old.
EVENTS_MAX_BYTES = 4 * 1024 * MIB
EVENTS_MAX_AGE_SECONDS = 7 * 24 * 3600


#: Each JetStream key/value bucket's size bound (its stream's ``max_bytes``), besides its entries' age.
#: A bucket discards nothing to stay under it (NATS refuses the write that would pass it: key/value
#: streams discard new), so what fills a bucket is refused with an error naming it, never silently
#: dropped: a step's journal entry (the run is handed back and retried, then ends as an ERROR saying
#: why), a webhook's Idempotency-Key (503 with Retry-After), an active-run entry (the run goes on,
#: unlisted). None: the bucket holds one value per published flow (history 1, flows capped per plan),
#: is bounded by that count, and must always take a flow's removal.
#: With KZ_EVENTS' 4 GiB, the byte bounds add up to about 7.3 GiB, below the chart's JetStream store (10 GiB).
KV_MAX_BYTES: dict[str, int | None] = {
    "KZ_STEPS": 2 * 1024 * MIB,  # the step journal: results of steps with effects, kept 24 h
    "KZ_IDEMPOTENCY": 256 * MIB,  # webhook Idempotency-Keys, kept 24 h (about a million)
    "KZ_ACTIVE": 256 * MIB,  # active runs (listed after LISTED_AFTER_SECONDS, queued and waiting ones)
    "KZ_CANCELS": 64 * MIB,
    "KZ_SLOTS": 64 * MIB,  # concurrency limits' holders and queues
    "KZ_BUDGETS": 64 * MIB,  # rate budgets' token buckets
    "KZ_QUOTA_BLOCKS": 16 * MIB,
    "KZ_CAPTURING": 16 * MIB,
    "KZ_LEADERS": 1 * MIB,
    "KZ_WAITS": 256 * MIB,  # runs waiting for a call (their continuation), decided entries kept small
    "KZ_REVISIONS": 64 * MIB,  # the specs suspended runs resume on, one per revision
    "KZ_KONNECTS": None,  # one spec per published flow
    "KZ_SCHEDULES": None,  # one per published schedule
    "KZ_POLLS": None,  # one cursor per published polling trigger
}
#: A bucket not named above.
KV_DEFAULT_MAX_BYTES = 64 * MIB


def kv_max_bytes(bucket: str) -> int | None:
    """The size bound of key/value bucket ``bucket`` (:data:`KV_MAX_BYTES`); None: bounded by its keys."""
    return KV_MAX_BYTES.get(bucket, KV_DEFAULT_MAX_BYTES)


class TooDeep(ValueError):
    """A JSON value nested deeper than allowed."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit = limit


def check_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise :class:`TooDeep` when ``value`` nests objects/arrays deeper than ``limit`` (iteratively:
    no recursion, whatever the input)."""
    if not isinstance(value, dict | list):
        return
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise TooDeep(limit)
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, dict | list) and child:
                stack.append((child, depth + 1))
            elif isinstance(child, dict | list) and depth + 1 > limit:
                raise TooDeep(limit)
