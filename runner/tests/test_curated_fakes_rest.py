"""The last six curated apps without an OpenAPI document, against hand-written fakes of their APIs.

Intercom, Pipedrive, Salesforce, Shopify, Typeform and Zendesk: each fake answers only the routes
the API has, with its auth (Intercom's version header, Pipedrive's ``api_token`` query parameter,
Shopify's ``X-Shopify-Access-Token``, Zendesk's ``email/token:api_token`` basic auth), its error
shapes and the wrapping its bodies take (Shopify's ``{"product": {...}}``, Zendesk's
``{"ticket": {...}}``), and refuses a request without a parameter the API requires. See
``curated_fakes.exercise`` for what each case runs.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from curated_fakes import BEARER, TOKEN, Case, Reply, Request, State, bearer, dig, echo, exercise, iso, newest, rest


def _listed(kind: str, key: str) -> Callable[[Request, dict[str, str], State], Reply]:
    return lambda r, p, s: (200, {key: newest(s, kind)})


# --- Intercom: Intercom-Version header, {"type": "error.list", "errors": [...]} -----------------------
def _intercom_auth(r: Request) -> bool:
    return bearer(r) and bool(r.headers.get("intercom-version"))


intercom = rest(
    [
        (
            "GET",
            r"/conversations",
            (),
            lambda r, p, s: (200, {"type": "conversation.list", "conversations": newest(s, "conversations")}),
        ),
        (
            "POST",
            r"/contacts/search",
            ("query",),
            lambda r, p, s: (200, {"type": "list", "data": newest(s, "contacts")}),
        ),
        ("POST", r"/contacts", ("role", "email"), echo(type="contact", id="c9")),
        (
            "POST",
            r"/conversations/(?P<id>\w+)/reply",
            ("admin_id", "body", "message_type", "type"),
            echo(type="conversation"),
        ),
        ("POST", r"/contacts/(?P<id>\w+)/notes", ("body",), echo(type="note")),
        ("POST", r"/contacts/(?P<contact_id>\w+)/tags", ("id",), echo(type="tag")),
        ("GET", r"/admins", (), lambda r, p, s: (200, {"type": "admin.list", "admins": [{"id": "a1", "name": "Ada"}]})),
        ("GET", r"/tags", (), lambda r, p, s: (200, {"type": "list", "data": [{"id": "t1", "name": "vip"}]})),
    ],
    authorized=_intercom_auth,
    unauthorized=(401, {"type": "error.list", "errors": [{"code": "unauthorized", "message": "Access Token Invalid"}]}),
    missing=lambda key: (
        400,
        {"type": "error.list", "errors": [{"code": "parameter_not_found", "message": f"{key} is required"}]},
    ),
    not_found=(404, {"type": "error.list", "errors": [{"code": "not_found", "message": "Resource Not Found"}]}),
)

# --- Pipedrive: ?api_token=, {"success": true, "data": ...}, {"success": false, "error", "errorCode"} ---
pipedrive = rest(
    [
        ("GET", r"/deals", (), lambda r, p, s: (200, {"success": True, "data": newest(s, "deals")})),
        ("GET", r"/persons", (), lambda r, p, s: (200, {"success": True, "data": newest(s, "persons")})),
        ("GET", r"/persons/search", ("term",), lambda r, p, s: (200, {"success": True, "data": {"items": []}})),
        ("GET", r"/stages", (), lambda r, p, s: (200, {"success": True, "data": [{"id": 1, "name": "Lead In"}]})),
        ("POST", r"/deals", ("title",), lambda r, p, s: (201, {"success": True, "data": {"id": 5, **r.json}})),
        (
            "PUT",
            r"/deals/(?P<id>\d+)",
            (),
            lambda r, p, s: (200, {"success": True, "data": {"id": int(p["id"]), **r.json}}),
        ),
        ("POST", r"/persons", ("name",), lambda r, p, s: (201, {"success": True, "data": {"id": 6, **r.json}})),
        ("POST", r"/organizations", ("name",), lambda r, p, s: (201, {"success": True, "data": {"id": 7, **r.json}})),
        ("POST", r"/notes", ("content",), lambda r, p, s: (201, {"success": True, "data": {"id": 8, **r.json}})),
    ],
    authorized=lambda r: r.query.get("api_token") == [TOKEN],
    unauthorized=(401, {"success": False, "error": "unauthorized access", "errorCode": 401}),
    missing=lambda key: (400, {"success": False, "error": f"{key} is required", "errorCode": 400}),
    not_found=(404, {"success": False, "error": "Unknown method .", "errorCode": 404}),
)


# --- Salesforce REST: SOQL on /query, sObjects, [{"message", "errorCode"}] -----------------------------
def _soql(r: Request, p: dict[str, str], s: State) -> Reply:
    q = r.query["q"][0]
    if not q.upper().startswith("SELECT ") or " FROM " not in q.upper():
        return 400, [{"message": "unexpected token", "errorCode": "MALFORMED_QUERY"}]
    records = newest(s, "leads") if " FROM LEAD" in q.upper() else []
    return 200, {"totalSize": len(records), "done": True, "records": records}


def _sobject(required: tuple[str, ...]) -> Callable[[Request, dict[str, str], State], Reply]:
    def reply(r: Request, p: dict[str, str], s: State) -> Reply:
        missing = [k for k in required if not r.json.get(k)]
        if missing:
            return 400, [
                {"message": f"Required fields are missing: [{missing[0]}]", "errorCode": "REQUIRED_FIELD_MISSING"}
            ]
        return 201, {"id": "00Q9", "success": True, "errors": []}

    return reply


salesforce = rest(
    [
        ("GET", r"/query", ("q",), _soql),
        ("GET", r"/sobjects", (), lambda r, p, s: (200, {"sobjects": [{"name": "Lead"}, {"name": "Contact"}]})),
        ("POST", r"/sobjects/Lead", (), _sobject(("LastName", "Company"))),
        ("POST", r"/sobjects/Contact", (), _sobject(("LastName",))),
        ("POST", r"/sobjects/Opportunity", (), _sobject(("Name", "StageName", "CloseDate"))),
        (
            "PATCH",
            r"/sobjects/(?P<sobject>\w+)/(?P<id>\w+)",
            (),
            lambda r, p, s: (
                (204, None) if r.json else (400, [{"message": "no fields", "errorCode": "JSON_PARSER_ERROR"}])
            ),
        ),
    ],
    authorized=bearer,
    unauthorized=(401, [{"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}]),
    missing=lambda key: (400, [{"message": f"{key} is required", "errorCode": "MALFORMED_QUERY"}]),
    not_found=(404, [{"message": "The requested resource does not exist", "errorCode": "NOT_FOUND"}]),
)


# --- Shopify Admin REST: .json paths, wrapped bodies, X-Shopify-Access-Token, {"errors": ...} ----------
def _since(kind: str) -> Callable[[Request, dict[str, str], State], Reply]:
    def reply(r: Request, p: dict[str, str], s: State) -> Reply:
        items = newest(s, kind)
        since = r.query.get("created_at_min")
        if since:
            items = [i for i in items if i["created_at"] >= since[0]]
        return 200, {kind: items}

    return reply


def _wrapped(root: str) -> Callable[[Request, dict[str, str], State], Reply]:
    return lambda r, p, s: (201, {root: {"id": 4501, **r.json[root]}})


shopify = rest(
    [
        ("GET", r"/orders\.json", (), _since("orders")),
        ("GET", r"/customers\.json", (), _since("customers")),
        ("GET", r"/products\.json", (), lambda r, p, s: (200, {"products": []})),
        ("GET", r"/locations\.json", (), lambda r, p, s: (200, {"locations": [{"id": 1, "name": "Shop"}]})),
        ("POST", r"/customers\.json", ("customer.email",), _wrapped("customer")),
        ("POST", r"/products\.json", ("product.title",), _wrapped("product")),
        ("POST", r"/orders\.json", ("order.line_items.0.variant_id", "order.line_items.0.quantity"), _wrapped("order")),
        (
            "POST",
            r"/inventory_levels/set\.json",
            ("inventory_item_id", "location_id", "available"),
            lambda r, p, s: (200, {"inventory_level": r.json}),
        ),
    ],
    authorized=lambda r: r.headers.get("x-shopify-access-token") == TOKEN,
    unauthorized=(401, {"errors": "[API] Invalid API key or access token (unrecognized login or wrong password)"}),
    missing=lambda key: (422, {"errors": {key.rsplit(".", 1)[-1]: ["can't be blank"]}}),
    not_found=(404, {"errors": "Not Found"}),
)


# --- Typeform: /forms, responses with `since`, {"code", "description"} ---------------------------------
def _responses(r: Request, p: dict[str, str], s: State) -> Reply:
    items = newest(s, "responses")
    since = r.query.get("since")
    if since:
        items = [i for i in items if i["submitted_at"] > since[0]]
    return 200, {"total_items": len(items), "page_count": 1, "items": items}


typeform = rest(
    [
        ("GET", r"/forms", (), lambda r, p, s: (200, {"total_items": 1, "items": [{"id": "F1", "title": "Signup"}]})),
        ("GET", r"/forms/(?P<form_id>\w+)/responses", (), _responses),
        ("POST", r"/forms", ("title",), lambda r, p, s: (201, {"id": "F2", **r.json})),
        ("DELETE", r"/forms/(?P<form_id>\w+)/responses", ("included_response_ids",), lambda r, p, s: (200, None)),
        ("POST", r"/workspaces", ("name",), lambda r, p, s: (201, {"id": "W1", **r.json})),
    ],
    authorized=bearer,
    unauthorized=(
        401,
        {"code": "AUTHENTICATION_FAILED", "description": "Authentication credentials not found on the Request Headers"},
    ),
    missing=lambda key: (400, {"code": "VALIDATION_ERROR", "description": f"{key} is required"}),
    not_found=(404, {"code": "NOT_FOUND", "description": "Endpoint not found"}),
)

# --- Zendesk: basic `email/token:api_token`, {"ticket": {...}}, {"error": ...} -------------------------
ZENDESK_USER = "ada@example.com"
ZENDESK_BASIC = "Basic " + base64.b64encode(f"{ZENDESK_USER}/token:{TOKEN}".encode()).decode()
zendesk = rest(
    [
        ("GET", r"/tickets\.json", (), _listed("tickets", "tickets")),
        (
            "POST",
            r"/tickets\.json",
            ("ticket.subject", "ticket.comment.body"),
            lambda r, p, s: (201, {"ticket": {"id": 35, **r.json["ticket"]}}),
        ),
        (
            "PUT",
            r"/tickets/(?P<id>\d+)\.json",
            ("ticket",),
            lambda r, p, s: (200, {"ticket": {"id": int(p["id"]), **r.json["ticket"]}}),
        ),
        ("POST", r"/users\.json", ("user.name",), lambda r, p, s: (201, {"user": {"id": 9, **r.json["user"]}})),
        ("GET", r"/search\.json", ("query",), lambda r, p, s: (200, {"results": [], "count": 0})),
    ],
    authorized=lambda r: r.headers.get("authorization") == ZENDESK_BASIC,
    unauthorized=(401, {"error": "Couldn't authenticate you"}),
    missing=lambda key: (
        422,
        {
            "error": "RecordInvalid",
            "description": "Record validation errors",
            "details": {key: [{"description": "cannot be blank"}]},
        },
    ),
    not_found=(404, {"error": "InvalidEndpoint", "description": "Not found"}),
)

CASES: dict[str, Case] = {
    "intercom": Case(
        intercom,
        "",
        "new_conversation",
        lambda s, n: s.setdefault("conversations", []).append(
            {"type": "conversation", "id": str(n), "created_at": 1_700_000_000 + n}
        ),
        {
            "create_contact": {"role": "user", "email": "ada@example.com", "name": "Ada"},
            "reply_conversation": {"id": "123", "admin_id": "a1", "body": "Thanks!"},
            "add_note": {"id": "c9", "body": "Called", "admin_id": "a1"},
            "tag_contact": {"contact_id": "c9", "id": "t1"},
            "find_contacts": {"email": "ada@example.com"},
        },
    ),
    "pipedrive": Case(
        pipedrive,
        "",
        "new_deal",
        lambda s, n: s.setdefault("deals", []).append({"id": n, "title": f"Deal {n}", "add_time": iso(n)}),
        {
            "create_deal": {"title": "Big deal", "value": "100", "currency": "EUR"},
            "update_deal": {"id": "5", "status": "won"},
            "create_person": {"name": "Ada", "email": "ada@example.com"},
            "create_organization": {"name": "Acme"},
            "create_note": {"content": "Called", "deal_id": "5"},
            "find_person": {"term": "Ada"},
        },
    ),
    "salesforce": Case(
        salesforce,
        "",
        "new_lead",
        lambda s, n: s.setdefault("leads", []).append({"Id": f"00Q{n}", "LastName": "Lovelace", "CreatedDate": iso(n)}),
        {
            "new_record": {"q": "SELECT Id FROM Lead"},
            "create_lead": {"LastName": "Lovelace", "Company": "Acme", "Email": "ada@example.com"},
            "create_contact": {"LastName": "Lovelace", "FirstName": "Ada"},
            "create_opportunity": {"Name": "Big", "StageName": "Prospecting", "CloseDate": "2026-12-31"},
            "update_record": {"sobject": "Lead", "id": "00Q1", "fields": {"Status": "Working"}},
            "soql_query": {"q": "SELECT Id, Name FROM Account LIMIT 10"},
        },
        credentials={"instance_url": "https://acme.my.salesforce.com"},
    ),
    "shopify": Case(
        shopify,
        "",
        "new_order",
        lambda s, n: s.setdefault("orders", []).append(
            {"id": 1000 + n, "created_at": iso(n).replace(".000Z", "+00:00")}
        ),
        {
            "create_customer": {"email": "ada@example.com", "first_name": "Ada"},
            "create_product": {"title": "Book", "price": "12.00"},
            "create_order": {"variant_id": "447654529", "quantity": "2", "email": "ada@example.com"},
            "set_inventory": {"inventory_item_id": "808950810", "location_id": "1", "available": "7"},
            "find_products": {"title": "Book"},
        },
        credentials={"shop": "acme"},
    ),
    "typeform": Case(
        typeform,
        "",
        "new_response",
        lambda s, n: s.setdefault("responses", []).append(
            {"response_id": f"r{n}", "submitted_at": iso(n).replace(".000", "")}
        ),
        {
            "new_response": {"form_id": "F1"},
            "create_form": {"title": "Signup"},
            "delete_responses": {"form_id": "F1", "included_response_ids": "r1"},
            "create_workspace": {"name": "Team"},
        },
    ),
    "zendesk": Case(
        zendesk,
        "",
        "new_ticket",
        lambda s, n: s.setdefault("tickets", []).append({"id": n, "subject": "Help", "created_at": iso(n)}),
        {
            "create_ticket": {"subject": "Help", "comment": "It broke", "requester_email": "ada@example.com"},
            "update_ticket": {"ticket_id": "35", "status": "solved"},
            "add_comment": {"ticket_id": "35", "body": "On it"},
            "create_user": {"name": "Ada", "email": "ada@example.com"},
            "search": {"query": "type:ticket status:open"},
        },
        credentials={"subdomain": "acme", "email": ZENDESK_USER},
    ),
}


@pytest.mark.parametrize("key", list(CASES))
async def test_curated_app_against_its_fake(key: str, make_ctx: Any) -> None:
    await exercise(key, CASES[key], make_ctx)


def test_the_fakes_refuse_what_the_apis_refuse() -> None:
    """The fakes are strict: a request without the auth, or without a required parameter, fails."""
    state: State = {}
    shop = shopify(state)
    assert shop(_req("POST", "/products.json", {"x-shopify-access-token": TOKEN}, {"product": {}}))[0] == 422
    assert shop(_req("GET", "/orders.json", {}, None))[0] == 401
    desk = zendesk(state)
    assert desk(_req("POST", "/tickets.json", {"authorization": ZENDESK_BASIC}, {"subject": "flat"}))[0] == 422
    assert desk(_req("GET", "/tickets.json", {"authorization": BEARER}, None))[0] == 401
    assert intercom(state)(_req("GET", "/admins", {"authorization": BEARER}, None))[0] == 401  # no Intercom-Version
    assert dig({"a": [{"b": 1}]}, "a.0.b") == 1


def _req(method: str, path: str, headers: dict[str, str], body: Any) -> Request:
    import json

    raw = json.dumps(body).encode() if body is not None else b""
    return Request(method, path, {}, {"content-type": "application/json", **headers}, raw)
