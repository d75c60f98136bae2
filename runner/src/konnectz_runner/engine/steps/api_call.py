"""Runs the ``api_call`` step; its config and constants are :mod:`konnectz_contracts.steps.api_call`."""

from __future__ import annotations

import json
from typing import Any

import httpx

from konnectz_contracts.errors import StepError
from konnectz_contracts.refs import build_json_body, resolve
from konnectz_contracts.steps.api_call import ApiCallStep
from konnectz_runner.apps import outbound, step_secrets
from konnectz_runner.engine.context import Outcome, StepContext, failure_kind, failure_of

__all__ = ["run"]


async def run(step: ApiCallStep, ctx: StepContext, *, max_response_bytes: int | None = None) -> Outcome:
    """Run one API-call step; never raises for a step failure, returns an ERROR outcome."""
    limit = ctx.max_response_bytes if max_response_bytes is None else max_response_bytes
    context = ctx.outputs
    warnings: list[str] = []
    recorded: dict[str, Any] = {"method": step.method, "url": step.url}
    output: dict[str, Any] | None = None
    error: str | None = None
    failure: dict[str, Any] = {}
    try:
        url = resolve(step.url, context, warnings).strip()
        opened, opened_origins = await _open_sealed(step, ctx)
        headers = {h.key: resolve(opened.get(id(h), h.value), context, warnings) for h in step.headers}
        param_values = [(p, resolve(opened.get(id(p), p.value), context, warnings)) for p in step.params]
        params = httpx.QueryParams([(p.key, value) for p, value in param_values])
        body = (
            build_json_body(step.body, context, wrap_in_array=step.wrap_in_array, warnings=warnings)
            if step.body
            else None
        )
        secret_headers = [h.key for h in step.headers if h.secret or h.sealed]
        recorded = {
            "method": step.method,
            "url": url,
            "headers": outbound.recorded_headers(headers, secret_headers),
            "params": {p.key: outbound.REDACTED if p.secret or p.sealed else value for p, value in param_values},
        }
        if body is not None:
            recorded["body"] = body
        parsed = ctx.guard.parse_url(url)  # its addresses are checked by outbound.send, at each hop
        content: bytes | None = None
        if body is not None:
            content = json.dumps(body, ensure_ascii=False).encode()
            if not any(k.lower() == "content-type" for k in headers):
                headers["Content-Type"] = "application/json"
        if ctx.idempotency_key is not None and not any(k.lower() == "idempotency-key" for k in headers):
            headers["Idempotency-Key"] = ctx.idempotency_key  # the same on every attempt of a retried step
        # Params are added to a query the URL may already carry (httpx's ``params=`` would replace it).
        target = parsed.copy_merge_params(params) if params else parsed
        for row in (*step.headers, *step.params):
            if row.sealed:
                step_secrets.check_origin(row.key, opened_origins[id(row)], target)
        try:
            request = ctx.http.build_request(step.method, target, headers=headers, content=content)
        except ValueError as exc:  # e.g. a header value that is not ASCII
            raise StepError(f"Invalid request to {outbound.display_url(target)}: {exc}") from exc
        response, raw = await outbound.send(ctx.http, ctx.guard, request, limit, secret_headers=secret_headers)
        output = {
            "status": response.status_code,
            "headers": {k: ", ".join(response.headers.get_list(k)) for k in response.headers},
            "body": outbound.parse_body(response, raw),
        }
        if response.status_code >= 400:
            snippet = raw.decode(response.encoding or "utf-8", errors="replace")[: outbound.ERROR_BODY_CHARS]
            error = f"HTTP {response.status_code} from {outbound.display_url(response.url)}: {snippet}"
            failure = {
                "failure": failure_kind(response.status_code),
                "status_code": response.status_code,
                "retry_after": outbound.retry_after_seconds(response),
            }
    except StepError as exc:
        error = str(exc)
        failure = failure_of(exc)
    if warnings:
        recorded["warnings"] = warnings
    if error:
        return Outcome(status="ERROR", output=output, input=recorded, error=error, **failure)
    return Outcome(status="SUCCESS", output=output, input=recorded)


async def _open_sealed(step: ApiCallStep, ctx: StepContext) -> tuple[dict[int, str], dict[int, str | None]]:
    """The plain values of the step's sealed rows (by row identity) and the origins they were typed for."""
    rows = [row for row in (*step.headers, *step.params) if row.sealed]
    if not rows:
        return {}, {}
    opener = ctx.open_secrets or step_secrets.broker_step_secrets
    opened = await opener(ctx.konnect_id, [row.sealed or "" for row in rows])
    if len(opened) != len(rows):
        raise StepError("The step's secret values could not be read")
    return {id(r): v for r, (v, _) in zip(rows, opened, strict=True)}, {
        id(r): o for r, (_, o) in zip(rows, opened, strict=True)
    }
