"""``/resume/<token>``: the resume URL of a run waiting in a Wait step (docs/waits.md).

- ``POST`` (or ``PUT``): the call. Its body (JSON, form or query, at most the webhook limit) becomes
  the Wait step's output and the run resumes, once (:func:`konnectz_runner.bus.decide_call`):
  200 ``{"status": "resumed"}``; 410 with the reason when the link was used, the wait timed out or
  the run was cancelled; 202 when the run has not reached the wait yet (it resumes as soon as it does).
- ``GET``: what the link's wait is (waiting until when, or why the link is no longer valid); changes
  nothing, so link previews and scanners cannot resume a run.
- A token whose signature does not hold (forged, altered, another konnect's): 404, nothing read.
"""

from __future__ import annotations

import logging

from nats.js.kv import KeyValue
from starlette.requests import Request
from starlette.responses import JSONResponse

from konnectz_contracts.events import Unstorable
from konnectz_contracts.waits import KV_WAITS, read_resume_token, resume_secret
from konnectz_runner import telemetry
from konnectz_runner.bus import decide_call, wait_status
from konnectz_runner.ingress.webhook import WebhookError, read_trigger_output

__all__ = ["resume"]

log = logging.getLogger(__name__)

_INVALID = {"error": "Invalid resume link: no run waits on it (the link is forged, altered or incomplete)"}


async def _bucket(runner: object) -> KeyValue:
    kv: KeyValue | None = getattr(runner, "waits_kv", None)
    if kv is None:
        js = getattr(runner, "js", None)
        if js is None:
            raise RuntimeError("not connected to NATS")
        kv = await js.key_value(KV_WAITS)
        runner.waits_kv = kv  # type: ignore[attr-defined]
    return kv


async def resume(request: Request) -> JSONResponse:
    runner = request.app.state.runner
    read = read_resume_token(request.path_params["token"], resume_secret)
    if read is None:
        return JSONResponse(_INVALID, status_code=404)
    konnect_id, run_id, step_id = read
    try:
        kv = await _bucket(runner)
        if request.method == "GET":
            answer = await wait_status(kv, konnect_id, run_id, step_id)
            return JSONResponse(answer.body, status_code=answer.status)
        try:
            body = await read_trigger_output(request, runner.settings.max_body_bytes)
        except WebhookError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        answer = await decide_call(runner.js, kv, konnect_id, run_id, step_id, body)
    except Unstorable as exc:
        return JSONResponse(
            {"error": f"The call's data cannot be stored with the run: {exc.message}"}, status_code=exc.status
        )
    except Exception as exc:  # NATS unavailable: the caller may call again (a call decides once)
        log.warning("Resume of run %s (%s) failed: %s", run_id, step_id, exc or type(exc).__name__)
        return JSONResponse(
            {"error": "The wait could not be reached; try again"},
            status_code=503,
            headers={"Retry-After": str(runner.settings.retry_after_seconds)},
        )
    if answer.status == 200:
        telemetry.RUNS_ACCEPTED.labels("resume").inc()
        log.info("Run %s: resumed by a call to its wait %s", run_id, step_id)
    return JSONResponse(answer.body, status_code=answer.status)
