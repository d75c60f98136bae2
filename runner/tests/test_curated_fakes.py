"""Curated apps Prism cannot mock, against small hand-written fakes of their real APIs.

Prism cannot start on Stripe's or Microsoft Graph's documents and cannot make Telegram's or
Notion's replies (``test_curated_prism.py``). Each fake here is a real local HTTP server speaking
the part of the API the manifest uses, refusing what the live API refuses: a wrong credential,
a missing required parameter (with the API's own error shape), the wrong media type (Stripe takes
forms, Telegram's sendPhoto multipart), a missing ``Notion-Version``. ``curated_fakes.exercise``
runs every action and search of the app through the ``app_event`` step against it, and polls one
polling trigger three times: the first poll records, a new item is found once, then nothing is new.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from curated_fakes import TOKEN, Case, Reply, Request, State, exercise


# --- Stripe: form bodies, `Authorization: Bearer sk_...`, lists {object: list, data, has_more} ---------
def stripe(state: State) -> Callable[[Request], Reply]:
    required = {
        "/v1/products": ["name"],
        "/v1/prices": ["currency", "product", "unit_amount"],
        "/v1/payment_links": ["line_items[0][price]", "line_items[0][quantity]"],
        "/v1/refunds": ["payment_intent"],
        "/v1/customers": [],
    }

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return 401, {"error": {"type": "invalid_request_error", "message": "Invalid API Key provided"}}
        if r.method == "POST":
            if r.headers.get("content-type") != "application/x-www-form-urlencoded":
                return 400, {"error": {"message": "Stripe takes application/x-www-form-urlencoded bodies"}}
            missing = [k for k in required.get(r.path, ["?"]) if not r.form.get(k)]
            if missing:
                return 400, {
                    "error": {"type": "invalid_request_error", "message": f"Missing required param: {missing[0]}."}
                }
            if "unit_amount" in r.form and not r.form["unit_amount"].isdigit():
                return 400, {"error": {"message": "Invalid integer: unit_amount"}}
            kind = r.path.rsplit("/", 1)[1]
            item = {
                "id": f"{kind[:3]}_{len(state.setdefault(kind, [])) + 1}",
                "object": kind[:-1],
                "created": int(time.time()),
                **r.form,
            }
            state[kind].append(item)
            return 200, item
        if r.path == "/v1/customers/search" and not r.query.get("query"):
            return 400, {"error": {"message": "Missing required param: query."}}
        kind = r.path.split("/")[2]
        items = sorted(state.get(kind, []), key=lambda i: -i["created"])
        since = r.query.get("created[gt]")
        if since:
            items = [i for i in items if i["created"] > int(since[0])]
        return 200, {"object": "list", "data": items[: int(r.query.get("limit", ["10"])[0])], "has_more": False}

    return handle


# --- Telegram Bot API: /bot<token>/<method>, {"ok": true, "result": ...} ---------------------------------
def telegram(state: State) -> Callable[[Request], Reply]:
    required = {
        "sendMessage": ["chat_id", "text"],
        "sendPhoto": ["chat_id", "photo"],
        "forwardMessage": ["chat_id", "from_chat_id", "message_id"],
        "editMessageText": ["chat_id", "message_id", "text"],
        "getUpdates": [],
    }

    def handle(r: Request) -> Reply:
        token, _, method = r.path.removeprefix("/bot").partition("/")
        if token != TOKEN:
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        # The Bot API takes JSON, urlencoded or multipart bodies (multipart only needed to upload files).
        kind = r.headers.get("content-type", "")
        if kind.startswith("multipart/form-data"):
            body: dict[str, Any] = {m.decode(): "x" for m in re.findall(rb'name="([^"]+)"', r.raw)}
        elif r.raw and not (r.form or isinstance(r.json, dict)):
            return 400, {"ok": False, "error_code": 400, "description": f"Bad Request: unsupported {kind}"}
        else:
            body = r.form or (r.json if isinstance(r.json, dict) else {})
        missing = [k for k in required.get(method, ["?"]) if body.get(k) in (None, "")]
        if missing:
            return 400, {"ok": False, "error_code": 400, "description": f"Bad Request: {missing[0]} is empty"}
        if method == "getUpdates":
            return 200, {"ok": True, "result": state.setdefault("updates", [])[: body.get("limit", 100)]}
        return 200, {"ok": True, "result": {"message_id": 7, "chat": {"id": body["chat_id"]}, "text": body.get("text")}}

    return handle


# --- Notion: Notion-Version header, {"object": "error", "status", "code", "message"} -------------------
def notion(state: State) -> Callable[[Request], Reply]:
    def error(status: int, code: str, message: str) -> Reply:
        return status, {"object": "error", "status": status, "code": code, "message": message}

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return error(401, "unauthorized", "API token is invalid.")
        if not r.headers.get("notion-version"):
            return error(400, "missing_version", "Notion-Version header failed validation")
        body = r.json if isinstance(r.json, dict) else {}
        if re.fullmatch(r"/v1/databases/[^/]+/query", r.path) and r.method == "POST":
            return 200, {
                "object": "list",
                "results": state.setdefault("pages", [])[::-1],
                "has_more": False,
                "next_cursor": None,
            }
        if r.path == "/v1/pages" and r.method == "POST":
            if not (body.get("parent") or {}).get("database_id") or not isinstance(body.get("properties"), dict):
                return error(400, "validation_error", "body.parent.database_id and body.properties should be defined")
            return 200, {"object": "page", "id": "page-1", "properties": body["properties"]}
        if re.fullmatch(r"/v1/pages/[^/]+", r.path) and r.method == "PATCH":
            if not isinstance(body.get("properties"), dict):
                return error(400, "validation_error", "body.properties should be an object")
            return 200, {"object": "page", "id": r.path.rsplit("/", 1)[1]}
        if re.fullmatch(r"/v1/blocks/[^/]+/children", r.path) and r.method == "PATCH":
            if not isinstance(body.get("children"), list):
                return error(400, "validation_error", "body.children should be an array")
            return 200, {"object": "list", "results": body["children"]}
        if r.path == "/v1/search" and r.method == "POST":
            return 200, {"object": "list", "results": [{"object": "database", "id": "db-1"}], "has_more": False}
        return error(404, "object_not_found", "Could not find object")

    return handle


# --- Microsoft Graph (Outlook and Teams): {"value": [...]}, {"error": {"code", "message"}} ---------------
def graph(state: State) -> Callable[[Request], Reply]:
    def need(body: dict[str, Any], *paths: str) -> str | None:
        for path in paths:
            value: Any = body
            for part in path.split("."):
                value = (
                    value[int(part)]
                    if isinstance(value, list) and part.isdigit() and int(part) < len(value)
                    else (value.get(part) if isinstance(value, dict) else None)
                )
            if value in (None, ""):
                return path
        return None

    posts = {
        "/v1.0/me/microsoft.graph.sendMail": (
            "message.subject",
            "message.toRecipients.0.emailAddress.address",
            "message.body.content",
        ),
        "/v1.0/me/events": ("subject", "start.dateTime", "start.timeZone", "end.dateTime", "end.timeZone"),
        "/v1.0/me/contacts": ("givenName",),
        "/v1.0/me/messages": ("subject", "toRecipients.0.emailAddress.address"),
    }

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return 401, {"error": {"code": "InvalidAuthenticationToken", "message": "Access token is empty."}}
        body = r.json if isinstance(r.json, dict) else {}
        if r.method == "POST":
            teams = re.fullmatch(r"/v1\.0/(teams/[^/]+/channels/[^/]+|chats/[^/]+)/messages", r.path)
            fields = (
                ("body.content",)
                if teams
                else ("displayName",)
                if re.fullmatch(r"/v1\.0/teams/[^/]+/channels", r.path)
                else posts.get(r.path)
            )
            if fields is None:
                return 404, {"error": {"code": "ResourceNotFound", "message": r.path}}
            missing = need(body, *fields)
            if missing:
                return 400, {"error": {"code": "ErrorInvalidRequest", "message": f"{missing} is required"}}
            return (202, None) if r.path.endswith("sendMail") else (201, {"id": "AAMk-1", **body})
        if r.path == "/v1.0/me/messages":
            return 200, {"value": state.setdefault("mail", [])[::-1]}
        if re.fullmatch(r"/v1\.0/teams/[^/]+/channels/[^/]+/messages", r.path):
            return 200, {"value": state.setdefault("teams", [])[::-1]}
        if r.path in ("/v1.0/me/mailFolders", "/v1.0/me/joinedTeams") or re.fullmatch(
            r"/v1\.0/teams/[^/]+/channels", r.path
        ):
            return 200, {"value": [{"id": "id-1", "displayName": "General"}]}
        return 404, {"error": {"code": "ResourceNotFound", "message": r.path}}

    return handle


NOW = "2026-11-23T10:00:00Z"
VALUES: dict[str, dict[str, dict[str, Any]]] = {
    "stripe": {
        "create_customer": {"email": "ada@example.com", "name": "Ada"},
        "create_product": {"name": "Book"},
        "create_price": {"product": "pro_1", "unit_amount": "1200", "currency": "eur", "interval": "month"},
        "create_payment_link": {"price": "pri_1", "quantity": "2"},
        "create_refund": {"payment_intent": "pi_1"},
        "find_customer": {"query": "email:'ada@example.com'"},
    },
    "telegram": {
        "send_message": {"chat_id": "42", "text": "Hello"},
        "send_photo": {"chat_id": "42", "photo": "https://example.com/cat.png", "caption": "Cat"},
        "forward_message": {"chat_id": "42", "from_chat_id": "43", "message_id": "7"},
        "edit_message_text": {"chat_id": "42", "message_id": "7", "text": "Edited"},
    },
    "notion": {
        "new_database_item": {"id": "db-1"},
        "create_database_item": {"database_id": "db-1", "properties": json.dumps({"Name": {"title": []}})},
        "update_page": {"id": "page-1", "properties": '{"Done": {"checkbox": true}}'},
        "append_text": {
            "id": "page-1",
            "children": json.dumps([{"type": "paragraph", "paragraph": {"rich_text": []}}]),
        },
        "find_database_items": {"id": "db-1"},
    },
    "microsoft_outlook": {
        "send_email": {"to": "ada@example.com", "subject": "Hi", "body": "Hello"},
        "create_event": {"subject": "Tea", "start": NOW, "start_tz": "UTC", "end": NOW, "end_tz": "UTC"},
        "create_contact": {"givenName": "Ada", "email": "ada@example.com"},
        "create_draft": {"to": "ada@example.com", "subject": "Draft"},
    },
    "microsoft_teams": {
        "new_channel_message": {"team_id": "t1", "channel_id": "c1"},
        "send_channel_message": {"team_id": "t1", "channel_id": "c1", "content": "Hello team"},
        "send_chat_message": {"chat_id": "chat1", "content": "Hello"},
        "create_channel": {"team_id": "t1", "displayName": "Launch"},
        "list_channels": {"team_id": "t1"},
    },
}
CASES: dict[str, Case] = {
    "stripe": Case(
        stripe,
        "",
        "new_customer",
        lambda s, n: s.setdefault("customers", []).append({"id": f"cus_{n}", "created": int(time.time()) + 10 * n}),
        VALUES["stripe"],
    ),
    "telegram": Case(
        telegram,
        "/bot{{auth.bot_token}}",
        "new_update",
        lambda s, n: s.setdefault("updates", []).append({"update_id": 100 + n, "message": {"text": "hi"}}),
        VALUES["telegram"],
    ),
    "notion": Case(
        notion,
        "",
        "new_database_item",
        lambda s, n: s.setdefault("pages", []).append({"id": f"p{n}", "created_time": f"2026-11-2{n}T00:00:00Z"}),
        VALUES["notion"],
    ),
    "microsoft_outlook": Case(
        graph,
        "/v1.0",
        "new_email",
        lambda s, n: s.setdefault("mail", []).append({"id": f"m{n}", "receivedDateTime": f"2026-11-2{n}T00:00:00Z"}),
        VALUES["microsoft_outlook"],
    ),
    "microsoft_teams": Case(
        graph,
        "/v1.0",
        "new_channel_message",
        lambda s, n: s.setdefault("teams", []).append({"id": f"t{n}", "createdDateTime": f"2026-11-2{n}T00:00:00Z"}),
        VALUES["microsoft_teams"],
    ),
}


@pytest.mark.parametrize("key", list(CASES))
async def test_curated_app_against_its_fake(key: str, make_ctx: Any) -> None:
    await exercise(key, CASES[key], make_ctx)
