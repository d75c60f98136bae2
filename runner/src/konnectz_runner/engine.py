"""Executes a :class:`~konnectz_runner.spec.FlowSpec` for one :class:`~konnectz_runner.events.RunRequest`.

Steps run in order. The context starts as ``{trigger_id: trigger_output}`` and each step's
output is added under its node id, so later steps can reference it. The first failing step
marks the run ERROR and stops it; the result is always one :class:`TaskEvent`.

API-call steps:

- url, headers, params and body values are resolved with :mod:`konnectz_runner.refs`;
  params go to the query string, the body is JSON built from the key/value rows.
- Every URL, and every redirect hop (at most :data:`MAX_REDIRECTS`), is checked by the
  :class:`~konnectz_runner.netguard.NetGuard`; httpx is never left to follow redirects itself.
- Retries: only when no connection could be made (nothing was sent, so repeating cannot
  duplicate an effect): :data:`CONNECT_ATTEMPTS` tries with a short exponential backoff.
  Timeouts after connecting and HTTP errors are not retried.
- The output is ``{"status": int, "headers": {...}, "body": <parsed JSON or text>}``; a status
  of 400 or more is a step ERROR.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import httpx

from konnectz_runner.errors import ConnectFailed, StepError
from konnectz_runner.events import RunRequest, StepResult, TaskEvent
from konnectz_runner.netguard import NetGuard
from konnectz_runner.refs import build_json_body, resolve
from konnectz_runner.spec import ApiCallStep, FlowSpec

__all__ = ["CONNECT_ATTEMPTS", "MAX_REDIRECTS", "MAX_RESPONSE_BYTES", "execute", "run_api_call"]

MAX_REDIRECTS = 5
CONNECT_ATTEMPTS = 3
CONNECT_BACKOFF_SECONDS = 0.25  # 0.25 s, then 0.5 s
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
ERROR_BODY_CHARS = 200
REDACTED = "***"
# Header values that are never written to task logs (the request itself still carries them).
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"})
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})


def _now() -> datetime:
    return datetime.now(UTC)


def _display_url(url: httpx.URL) -> str:
    """Scheme, host and path only: query strings often carry keys."""
    return str(url.copy_with(query=None, fragment=None))


def _parse_body(response: httpx.Response, content: bytes) -> Any:
    text = content.decode(response.encoding or "utf-8", errors="replace")
    if not text:
        return ""
    content_type = response.headers.get("content-type", "").lower()
    if "json" in content_type:
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


async def _read_limited(response: httpx.Response, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise StepError(f"Response from {_display_url(response.url)} is larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _send_once(http: httpx.AsyncClient, request: httpx.Request, limit: int) -> tuple[httpx.Response, bytes]:
    display = _display_url(request.url)
    for attempt in range(1, CONNECT_ATTEMPTS + 1):
        try:
            response = await http.send(request, stream=True, follow_redirects=False)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            failure = ConnectFailed(f"Could not connect to {display}: {exc or type(exc).__name__}")
            if attempt == CONNECT_ATTEMPTS:
                raise failure from exc
            await asyncio.sleep(CONNECT_BACKOFF_SECONDS * 2 ** (attempt - 1))
            continue
        except httpx.TimeoutException as exc:
            raise StepError(f"Timed out calling {display} ({type(exc).__name__})") from exc
        except httpx.RequestError as exc:
            raise StepError(f"Could not call {display}: {exc or type(exc).__name__}") from exc
        try:
            content = await _read_limited(response, limit)
        except httpx.TimeoutException as exc:
            raise StepError(f"Timed out reading the response of {display} ({type(exc).__name__})") from exc
        except httpx.RequestError as exc:
            raise StepError(f"Could not read the response of {display}: {exc}") from exc
        finally:
            await response.aclose()
        return response, content
    raise AssertionError("unreachable")


def _redirect(request: httpx.Request, response: httpx.Response) -> httpx.Request | None:
    """The next request of a redirect (as browsers and httpx build it), or None if it is not one."""
    location = response.headers.get("location")
    if response.status_code not in _REDIRECT_CODES or not location:
        return None
    try:
        url = request.url.join(location)
    except httpx.InvalidURL as exc:
        raise StepError(f"Invalid redirect location {location!r} from {_display_url(request.url)}") from exc
    method = request.method
    if response.status_code == 303 and method != "HEAD":
        method = "GET"
    if response.status_code in (301, 302) and method == "POST":
        method = "GET"
    headers = httpx.Headers(request.headers)
    headers.pop("host", None)
    if url.scheme != request.url.scheme or url.host != request.url.host or url.port != request.url.port:
        headers.pop("authorization", None)  # never hand credentials to another origin
    content: bytes | None = request.content
    if method != request.method:
        content = None
        for name in ("content-type", "content-length", "transfer-encoding"):
            headers.pop(name, None)
    return httpx.Request(method, url, headers=headers, content=content)


async def _send(
    http: httpx.AsyncClient, guard: NetGuard, request: httpx.Request, limit: int
) -> tuple[httpx.Response, bytes]:
    for _hop in range(MAX_REDIRECTS + 1):
        await guard.check_url(request.url)
        response, content = await _send_once(http, request, limit)
        following = _redirect(request, response)
        if following is None:
            return response, content
        request = following
    raise StepError(f"Too many redirects (more than {MAX_REDIRECTS}) calling {_display_url(request.url)}")


def _recorded_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if k.lower() in SECRET_HEADERS else v) for k, v in headers.items()}


async def run_api_call(
    step: ApiCallStep,
    context: dict[str, Any],
    *,
    http: httpx.AsyncClient,
    guard: NetGuard,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
) -> StepResult:
    """Run one API-call step against ``context``; never raises for a step failure, returns an ERROR result."""
    started = _now()
    warnings: list[str] = []
    recorded: dict[str, Any] = {"method": step.method, "url": step.url}
    output: dict[str, Any] | None = None
    error: str | None = None
    try:
        url = resolve(step.url, context, warnings).strip()
        headers = {h.key: resolve(h.value, context, warnings) for h in step.headers}
        params = httpx.QueryParams([(p.key, resolve(p.value, context, warnings)) for p in step.params])
        body = (
            build_json_body(step.body, context, wrap_in_array=step.wrap_in_array, warnings=warnings)
            if step.body
            else None
        )
        recorded = {
            "method": step.method,
            "url": url,
            "headers": _recorded_headers(headers),
            "params": dict(params),
        }
        if body is not None:
            recorded["body"] = body
        parsed = await guard.check_url(url)
        content: bytes | None = None
        if body is not None:
            content = json.dumps(body, ensure_ascii=False).encode()
            if not any(k.lower() == "content-type" for k in headers):
                headers["Content-Type"] = "application/json"
        # Params are added to a query the URL may already carry (httpx's ``params=`` would replace it).
        target = parsed.copy_merge_params(params) if params else parsed
        try:
            request = http.build_request(step.method, target, headers=headers, content=content)
        except ValueError as exc:  # e.g. a header value that is not ASCII
            raise StepError(f"Invalid request to {_display_url(target)}: {exc}") from exc
        response, raw = await _send(http, guard, request, max_response_bytes)
        output = {
            "status": response.status_code,
            "headers": {k: ", ".join(response.headers.get_list(k)) for k in response.headers},
            "body": _parse_body(response, raw),
        }
        if response.status_code >= 400:
            snippet = raw.decode(response.encoding or "utf-8", errors="replace")[:ERROR_BODY_CHARS]
            error = f"HTTP {response.status_code} from {_display_url(response.url)}: {snippet}"
    except StepError as exc:
        error = str(exc)
    if warnings:
        recorded["warnings"] = warnings
    return StepResult(
        step_id=step.id,
        name=step.name,
        app=step.kind,
        status="ERROR" if error else "SUCCESS",
        started_at=started,
        finished_at=_now(),
        input=recorded,
        output=output,
        error=error,
    )


async def execute(spec: FlowSpec, run: RunRequest, *, http: httpx.AsyncClient, guard: NetGuard) -> TaskEvent:
    """Run every step of ``spec`` for ``run`` and describe the outcome as one TaskEvent."""
    started = _now()
    context: dict[str, Any] = {spec.trigger_id: run.trigger_output}
    results: list[StepResult] = []
    for step in spec.steps:
        result = await run_api_call(step, context, http=http, guard=guard)
        results.append(result)
        if result.status == "ERROR":
            break
        context[step.id] = result.output
    return TaskEvent(
        run_id=run.run_id,
        konnect_id=spec.konnect_id,
        owner_id=spec.owner_id,
        konnect_name=spec.name,
        status="ERROR" if any(r.status == "ERROR" for r in results) else "SUCCESS",
        started_at=started,
        finished_at=_now(),
        trigger_id=spec.trigger_id,
        trigger_output=run.trigger_output,
        steps=results,
    )
