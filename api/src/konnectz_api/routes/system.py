"""Health and the dev mailbox."""

from __future__ import annotations

import html
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from konnectz_api.deps import BusDep, SettingsDep
from konnectz_api.errors import NotFound
from konnectz_api.services.dev_mail import read_mail

router = APIRouter(tags=["system"])
#: Seconds /healthz waits for a database connection before it reports the database unreachable.
HEALTH_DB_TIMEOUT_SECONDS = 2.0
_ARTICLE = "<article><h2>{subject}</h2><p><b>To:</b> {to} &middot; {date}</p><pre>{text}</pre>{links}</article>"


@router.get("/metrics", include_in_schema=False)
def metrics() -> Response:
    """Prometheus metrics of this api process (see konnectz_api.observability)."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


@router.get(
    "/healthz",
    summary="200 only when the database and NATS are reachable and the task-event consumer runs",
    description="503 with `problems` naming what is down: `database`, `nats`, or a background task "
    "(`task-event consumer`, `quota service`) that crashed and waits to be restarted.",
)
async def healthz(bus: BusDep, request: Request) -> JSONResponse:
    problems: dict[str, str] = {}
    try:
        # On the async read pool: no thread hop, so a thread pool busy with writes (or their row
        # locks) does not delay the answer; the pool's own timeout bounds the wait.
        async with request.app.state.read_pool.connection(timeout=HEALTH_DB_TIMEOUT_SECONDS) as conn:
            await conn.execute("SELECT 1")
    except Exception as exc:
        problems["database"] = f"unreachable: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    if not bus.connected:
        problems["nats"] = f"unreachable at {bus.url}: {bus.last_error or 'disconnected'}"
    for task in getattr(request.app.state, "supervised", []):
        problem = task.problem()
        if problem is not None:
            problems[task.name] = problem
    if problems:
        return JSONResponse({"status": "unavailable", "problems": problems}, status_code=503)
    return JSONResponse({"status": "ok"})


def _mail(settings: SettingsDep) -> list[dict[str, Any]]:
    if not settings.is_dev or settings.dev_maildir is None:
        raise NotFound("The dev mailbox exists only in development")
    return read_mail(settings.dev_maildir)


@router.get("/dev/mail.json", summary="Dev mailbox: messages sent by the api, newest first")
def dev_mail_json(settings: SettingsDep) -> list[dict[str, Any]]:
    return _mail(settings)


@router.get("/dev/mail", response_class=HTMLResponse, include_in_schema=False)
def dev_mail_html(settings: SettingsDep) -> HTMLResponse:
    items = _mail(settings)
    rows = (
        "".join(
            _ARTICLE.format(
                subject=html.escape(m["subject"]),
                to=html.escape(m["to"]),
                date=html.escape(m["date"] or ""),
                text=html.escape(m["text"]),
                links="".join(f'<p><a href="{html.escape(u)}">{html.escape(u)}</a></p>' for u in m["links"]),
            )
            for m in items
        )
        or "<p>No mail yet.</p>"
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>Konnectz dev mailbox</title>"
        "<style>body{font-family:sans-serif;max-width:800px;margin:2em auto}article{border-bottom:1px solid #ddd}"
        "pre{white-space:pre-wrap}</style></head><body><h1>Dev mailbox</h1>" + rows + "</body></html>"
    )
    return HTMLResponse(page)
