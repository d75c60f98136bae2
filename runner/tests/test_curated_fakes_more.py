"""Six curated apps written from public documentation (no OpenAPI document to mock), against small
hand-written fakes of their real APIs: Airtable, Calendly, Discord, Dropbox, GitLab and HubSpot.

Each fake is a real local HTTP server (``curated_fakes.Fake``) speaking the part of the API the
manifest uses, the way the API's public reference describes it: its base path, its credential
header (Airtable, Calendly, Dropbox, GitLab and HubSpot ``Authorization: Bearer``, GitLab also
``PRIVATE-TOKEN``, Discord ``Authorization: Bot``), the media type it takes (JSON everywhere;
Dropbox's RPC endpoints are POSTs of a JSON body, or no body at all for argument-less routes), and
its own error shape and status for a wrong credential and for a missing or invalid parameter.
``curated_fakes.exercise`` runs every action and search through the ``app_event`` step, the first
action with a wrong credential (HTTP 401), and one polling trigger per app three times (the first
poll records, a new item is found once, then nothing is new); :data:`CHECKS` then asserts what the
harness cannot see (the request the fake received).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from curated_fakes import CURATED, TOKEN, Case, Fake, Reply, Request, State, _step, exercise

from konnectz_contracts.manifest import App
from konnectz_runner.apps import Catalogue, build_test_request, dig
from konnectz_runner.engine import app_event


def _body(r: Request) -> dict[str, Any]:
    return r.json if isinstance(r.json, dict) else {}


def _json_type(r: Request) -> bool:
    return r.headers.get("content-type", "").split(";")[0].strip() == "application/json"


# --- Airtable: /v0, Bearer, {"error": {"type", "message"}}, records {id, createdTime, fields} -----------
AIRTABLE_BASE = "appLkNDICXNqxSDhG"
AIRTABLE_TABLES = [
    {
        "id": "tbltp8DGLhqbUmjK1",
        "name": "Contacts",
        "primaryFieldId": "fld1",
        "fields": [
            {"id": "fld1", "name": "Name", "type": "singleLineText"},
            {"id": "fld2", "name": "Email", "type": "email"},
            {"id": "fld3", "name": "Signed up", "type": "createdTime"},
        ],
    },
    {
        "id": "tblDeals00000001",
        "name": "Deals",
        "primaryFieldId": "fld9",
        "fields": [{"id": "fld9", "name": "Title", "type": "singleLineText"}, {"id": "fld8", "name": "Amount"}],
    },
]


def airtable(state: State) -> Callable[[Request], Reply]:
    records = state.setdefault("records", [])
    records.append(
        {"id": "recSEED000000001", "createdTime": "2026-11-01T00:00:00.000Z", "fields": {"Name": "Old", "Email": "o@x"}}
    )

    def error(status: int, kind: str, message: str) -> Reply:
        return status, {"error": {"type": kind, "message": message}}

    def table_of(name: str) -> dict[str, Any] | None:
        return next((t for t in AIRTABLE_TABLES if unquote(name) in (t["id"], t["name"])), None)

    def shown(record: dict[str, Any]) -> dict[str, Any]:
        # A "Created time" field is computed by Airtable from the record's creation.
        return {**record, "fields": {**record["fields"], "Signed up": record["createdTime"]}}

    def check_fields(table: dict[str, Any], fields: Any) -> Reply | None:
        if not isinstance(fields, dict):
            return error(422, "INVALID_REQUEST_MISSING_FIELDS", 'Could not find field "fields" in the request body')
        names = {f["name"] for f in table["fields"]}
        unknown = [k for k in fields if k not in names]
        if unknown:
            return error(422, "UNKNOWN_FIELD_NAME", f'Unknown field name: "{unknown[0]}"')
        return None

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return error(401, "AUTHENTICATION_REQUIRED", "Authentication required")
        if r.method in ("POST", "PATCH") and not _json_type(r):
            return error(415, "INVALID_REQUEST_UNKNOWN", "Invalid request: expected application/json")
        parts = r.path.removeprefix("/v0/").split("/")
        if r.path == "/v0/meta/whoami":
            return 200, {"id": "usrL2PNC5o3H4lBEi", "email": "ada@example.com"}
        if r.path == "/v0/meta/bases":
            return 200, {"bases": [{"id": AIRTABLE_BASE, "name": "CRM", "permissionLevel": "create"}]}
        if len(parts) == 4 and parts[:2] == ["meta", "bases"] and parts[3] == "tables" and r.method == "GET":
            if parts[2] != AIRTABLE_BASE:
                return error(404, "NOT_FOUND", "Could not find what you are looking for")
            return 200, {"tables": AIRTABLE_TABLES}
        table = table_of(parts[1]) if len(parts) in (2, 3) and parts[0] == AIRTABLE_BASE else None
        if table is None:
            return error(
                403,
                "INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND",
                "Invalid permissions, or the requested model was not found.",
            )
        rows = records if table["name"] == "Contacts" else []
        if len(parts) == 2 and r.method == "GET":
            found = [shown(x) for x in rows]  # creation order, as the API lists without sort or view
            field, direction = r.query.get("sort[0][field]"), r.query.get("sort[0][direction]", ["asc"])[0]
            if field:
                if field[0] not in {f["name"] for f in table["fields"]}:
                    return error(422, "UNKNOWN_FIELD_NAME", f'Unknown field name: "{field[0]}"')
                if direction not in ("asc", "desc"):
                    return error(422, "INVALID_SORT_DIRECTION", f"Invalid sort direction: {direction}")
                found.sort(key=lambda x: str(x["fields"].get(field[0], "")), reverse=direction == "desc")
            formula = r.query.get("filterByFormula", [""])[0]
            if formula:
                match = re.fullmatch(r"\{([^}]+)\}\s*=\s*'([^']*)'", formula)
                if match is None:
                    return error(
                        422, "INVALID_FILTER_BY_FORMULA", f"The formula for filtering records is invalid: {formula}"
                    )
                found = [x for x in found if str(x["fields"].get(match[1], "")) == match[2]]
            size = int(r.query.get("pageSize", ["100"])[0])
            if not 1 <= size <= 100:
                return error(422, "INVALID_PAGE_SIZE", "pageSize must be between 1 and 100")
            return 200, {"records": found[:size]}
        if len(parts) == 2 and r.method == "POST":
            body = _body(r)
            problem = check_fields(table, body.get("fields"))
            if problem:
                return problem
            record = {
                "id": f"rec{len(records) + 1:013d}",
                "createdTime": "2026-11-10T00:00:00.000Z",
                "fields": body["fields"],
            }
            records.append(record)
            return 200, shown(record)
        record = next((x for x in rows if len(parts) == 3 and x["id"] == parts[2]), None)
        if record is None:
            return error(404, "NOT_FOUND", "Could not find what you are looking for")
        if r.method == "PATCH":
            body = _body(r)
            problem = check_fields(table, body.get("fields"))
            if problem:
                return problem
            record["fields"].update(body["fields"])
            return 200, shown(record)
        if r.method == "DELETE":
            records.remove(record)
            return 200, {"id": record["id"], "deleted": True}
        return error(404, "NOT_FOUND", "Could not find what you are looking for")

    return handle


def airtable_add(state: State, n: int) -> None:
    state["records"].append(
        {"id": f"recNEW{n:010d}", "createdTime": f"2026-11-2{n}T00:00:00.000Z", "fields": {"Name": f"New {n}"}}
    )


# --- Calendly: Bearer, {"title", "message", "details"}, {"resource": ...} / {"collection", "pagination"} -
CALENDLY = "https://api.calendly.com"
CALENDLY_USER, CALENDLY_ORG = f"{CALENDLY}/users/AAAAAAAAAAAAAAAA", f"{CALENDLY}/organizations/BBBBBBBBBBBBBBBB"
CALENDLY_TYPE = f"{CALENDLY}/event_types/CCCCCCCCCCCCCCCC"


def calendly(state: State) -> Callable[[Request], Reply]:
    events = state.setdefault("events", [])
    events.append(
        {
            "uri": f"{CALENDLY}/scheduled_events/SEED",
            "name": "Intro",
            "start_time": "2026-11-30T09:00:00Z",
            "status": "active",
        }
    )

    def invalid(parameter: str, message: str) -> Reply:
        return 400, {
            "title": "Invalid Argument",
            "message": "The supplied parameters are invalid.",
            "details": [{"parameter": parameter, "message": message}],
        }

    def page(items: list[Any]) -> dict[str, Any]:
        pagination = {
            "count": len(items),
            "next_page": None,
            "previous_page": None,
            "next_page_token": None,
            "previous_page_token": None,
        }
        return {"collection": items, "pagination": pagination}

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return 401, {"title": "Unauthenticated", "message": "The access token is invalid"}
        if r.method == "POST" and not _json_type(r):
            return 415, {"title": "Unsupported Media Type", "message": "Use application/json"}
        body, q = _body(r), {k: v[0] for k, v in r.query.items()}
        if r.path == "/users/me" and r.method == "GET":
            resource = {
                "uri": CALENDLY_USER,
                "name": "Ada Lovelace",
                "email": "ada@example.com",
                "current_organization": CALENDLY_ORG,
            }
            return 200, {"resource": resource}
        if r.path in ("/scheduled_events", "/event_types") and r.method == "GET":
            if not (q.get("user") or q.get("organization")):
                return invalid("user", "must be provided when organization is not")
            if q.get("user") not in (None, CALENDLY_USER):
                return 403, {"title": "Permission Denied", "message": "You do not have permission"}
            if not 1 <= int(q.get("count", "20")) <= 100:
                return invalid("count", "must be between 1 and 100")
            if r.path == "/event_types":
                return 200, page([{"uri": CALENDLY_TYPE, "name": "30 Minute Meeting", "active": True}])
            sort = q.get("sort", "start_time:asc")
            if sort not in ("start_time:asc", "start_time:desc"):
                return invalid("sort", "is invalid")
            ordered = sorted(events, key=lambda e: e["start_time"], reverse=sort.endswith("desc"))
            return 200, page(ordered[: int(q.get("count", "20"))])
        if r.path == "/scheduling_links" and r.method == "POST":
            for name in ("max_event_count", "owner", "owner_type"):
                if body.get(name) in (None, ""):
                    return invalid(name, "can't be blank")
            if body["owner_type"] != "EventType" or body["owner"] != CALENDLY_TYPE:
                return invalid("owner", "is invalid")
            resource = {
                "booking_url": "https://calendly.com/d/abc-123/30-minute-meeting",
                "owner": body["owner"],
                "owner_type": "EventType",
            }
            return 201, {"resource": resource}
        cancel = re.fullmatch(r"/scheduled_events/([^/]+)/cancellation", r.path)
        if cancel and r.method == "POST":
            if not any(e["uri"].endswith("/" + cancel[1]) for e in events):
                return 404, {
                    "title": "Resource Not Found",
                    "message": "The server could not find the requested resource.",
                }
            return 201, {
                "resource": {"canceled_by": "Ada Lovelace", "reason": body.get("reason"), "canceler_type": "host"}
            }
        if r.path == "/invitee_no_shows" and r.method == "POST":
            if not str(body.get("invitee", "")).startswith(f"{CALENDLY}/scheduled_events/"):
                return invalid("invitee", "must be an invitee URI")
            return 201, {"resource": {"uri": f"{CALENDLY}/invitee_no_shows/XYZ", "invitee": body["invitee"]}}
        return 404, {"title": "Resource Not Found", "message": "The server could not find the requested resource."}

    return handle


def calendly_add(state: State, n: int) -> None:
    # A booking for a later date than any before it: sorted by start time, it comes first.
    state["events"].append(
        {
            "uri": f"{CALENDLY}/scheduled_events/NEW{n}",
            "name": "30 Minute Meeting",
            "start_time": f"2026-12-0{n}T09:00:00Z",
            "status": "active",
        }
    )


# --- Discord: /api/v10, `Authorization: Bot <token>`, {"message", "code"} -------------------------------
DISCORD_CHANNEL, DISCORD_GUILD = "1170000000000000000", "80351110224678912"


def discord(state: State) -> Callable[[Request], Reply]:
    messages = state.setdefault("messages", [])
    messages.append({"id": "1180000000000000000", "channel_id": DISCORD_CHANNEL, "content": "Seed"})

    def unknown(what: str, code: int) -> Reply:
        return 404, {"message": f"Unknown {what}", "code": code}

    def form_error(field: str, code: str, message: str) -> Reply:
        errors = {field: {"_errors": [{"code": code, "message": message}]}}
        return 400, {"message": "Invalid Form Body", "code": 50035, "errors": errors}

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bot {TOKEN}":
            return 401, {"message": "401: Unauthorized", "code": 0}
        # "Clients using the HTTP API must provide a valid User Agent": DiscordBot ($url, $versionNumber).
        if not re.fullmatch(r"DiscordBot \(\S+, \S+\)", r.headers.get("user-agent", "")):
            return 403, {"message": "Missing or invalid User-Agent", "code": 40333}
        if r.method in ("POST", "PATCH") and not _json_type(r):
            return 400, {"message": "Cannot send an empty message", "code": 50006}
        path = r.path.removeprefix("/api/v10")
        body = _body(r)
        if path == "/users/@me":
            return 200, {"id": "80351110224678912", "username": "konnectz-bot", "bot": True}
        if path == "/users/@me/guilds":
            return 200, [{"id": DISCORD_GUILD, "name": "Acme", "owner": False}]
        if path == f"/guilds/{DISCORD_GUILD}/channels":
            return 200, [{"id": DISCORD_CHANNEL, "name": "general", "type": 0, "guild_id": DISCORD_GUILD}]
        m = re.fullmatch(r"/channels/(\d+)/messages(?:/(\d+))?(?:/reactions/([^/]+)/@me)?", path)
        if m is None:
            return 404, {"message": "404: Not Found", "code": 0}
        if m[1] != DISCORD_CHANNEL:
            return unknown("Channel", 10003)
        if m[2] is None and r.method == "GET":
            limit = r.query.get("limit", ["50"])[0]
            if not limit.isdigit() or not 1 <= int(limit) <= 100:
                return form_error("limit", "NUMBER_TYPE_MAX", "int value should be less than or equal to 100.")
            return 200, sorted(messages, key=lambda x: int(x["id"]), reverse=True)[: int(limit)]
        if m[2] is None and r.method == "POST":
            if not body.get("content") and not body.get("embeds"):
                return 400, {"message": "Cannot send an empty message", "code": 50006}
            if len(str(body.get("content", ""))) > 2000:
                return form_error("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
            if "tts" in body and not isinstance(body["tts"], bool):
                return form_error("tts", "BASE_TYPE_BOOLEAN", "Must be either true or false.")
            message = {
                "id": str(int(messages[-1]["id"]) + 1),
                "channel_id": m[1],
                "content": body["content"],
                "tts": body.get("tts", False),
            }
            messages.append(message)
            return 200, message
        message = next((x for x in messages if x["id"] == m[2]), None)
        if message is None:
            return unknown("Message", 10008)
        if m[3] is not None and r.method == "PUT":
            if "content-length" not in r.headers:
                return 411, {"message": "411: Length Required", "code": 0}
            emoji = unquote(m[3])
            # A unicode emoji (URL-encoded), or name:id for a custom one; anything else is unknown.
            if not (re.fullmatch(r"\w+:\d+", emoji) or (emoji and all(ord(c) > 0x2000 for c in emoji))):
                return 400, {"message": "Unknown Emoji", "code": 10014}
            message.setdefault("reactions", []).append(emoji)
            return 204, None
        if m[3] is None and r.method == "PATCH":
            if "content" in body and len(str(body["content"])) > 2000:
                return form_error("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
            message.update({k: v for k, v in body.items() if k in ("content", "embeds", "flags")})
            return 200, message
        if m[3] is None and r.method == "DELETE":
            messages.remove(message)
            return 204, None
        return 405, {"message": "405: Method Not Allowed", "code": 0}

    return handle


def discord_add(state: State, n: int) -> None:
    state["messages"].append({"id": str(1190000000000000000 + n), "channel_id": DISCORD_CHANNEL, "content": f"#{n}"})


# --- Dropbox: /2, RPC POSTs of JSON, {"error_summary", "error"} (409) or a text 400 ------------------------
DROPBOX_PATH = r"(/(.|[\r\n])*)?|id:.*|(ns:[0-9]+(/.*)?)"  # files/list_folder's root is ""
DROPBOX_PATH_NOT_ROOT = r"(/(.|[\r\n])*)|id:.*|(ns:[0-9]+(/.*)?)"


def dropbox(state: State) -> Callable[[Request], Reply]:
    files = state.setdefault("files", [])
    for name in ("report.pdf", "old.txt"):
        files.append(
            {
                ".tag": "file",
                "id": f"id:{name}",
                "name": name,
                "path_lower": f"/{name}",
                "path_display": f"/{name}",
                "server_modified": "2026-11-01T00:00:00Z",
            }
        )
    routes: dict[str, tuple[list[str], dict[str, str]]] = {
        "files/list_folder": (["path"], {"path": DROPBOX_PATH}),
        "files/create_folder_v2": (["path"], {"path": DROPBOX_PATH_NOT_ROOT}),
        "files/move_v2": (
            ["from_path", "to_path"],
            {"from_path": DROPBOX_PATH_NOT_ROOT, "to_path": DROPBOX_PATH_NOT_ROOT},
        ),
        "files/delete_v2": (["path"], {"path": DROPBOX_PATH_NOT_ROOT}),
        "sharing/create_shared_link_with_settings": (["path"], {"path": DROPBOX_PATH_NOT_ROOT}),
        "files/search_v2": (["query"], {}),
    }

    def bad(route: str, text: str) -> Reply:
        return 400, f'Error in call to API function "{route}": {text}'

    def conflict(summary: str, error: dict[str, Any]) -> Reply:
        return 409, {"error_summary": summary + "/..", "error": error}

    def find(path: str) -> dict[str, Any] | None:
        return next((f for f in files if f["path_lower"] == path.lower()), None)

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return 401, {"error_summary": "invalid_access_token/..", "error": {".tag": "invalid_access_token"}}
        route = r.path.removeprefix("/2/")
        if r.method != "POST":
            return 400, f'Error in call to API function "{route}": Expected POST, got {r.method}'
        if route == "users/get_current_account":  # no arguments: no body (or "null")
            if r.raw not in (b"", b"null"):
                return bad(route, "request body: expected null, got value")
            return 200, {"account_id": "dbid:AAH4f99T0taONIb", "email": "ada@example.com"}
        if route not in routes:
            return 404, f"Unknown API function: {route!r}"
        kind = r.headers.get("content-type", "")
        if kind.split(";")[0].strip() != "application/json":
            return 400, (
                f'Error in call to API function "{route}": Bad HTTP "Content-Type" header: "{kind}".  '
                'Expecting one of "application/json", "text/plain; charset=dropbox-cors-hack".'
            )
        body = _body(r)
        required, patterns = routes[route]
        for name in required:
            if name not in body:
                return bad(route, f"request body: missing required field '{name}'")
        for name, pattern in patterns.items():
            if not isinstance(body[name], str) or not re.fullmatch(pattern, body[name]):
                return bad(route, f"request body: {name}: '{body[name]}' did not match pattern '{pattern}'")
        for name in ("recursive", "include_deleted", "autorename"):
            if name in body and not isinstance(body[name], bool):
                return bad(route, f"request body: {name}: expected boolean, got {type(body[name]).__name__}")
        if route == "files/list_folder":
            folder = body["path"].lower()
            if folder and (find(folder) or {}).get(".tag") != "folder":
                return conflict("path/not_found", {".tag": "path", "path": {".tag": "not_found"}})
            entries = [f for f in files if f["path_lower"].rsplit("/", 1)[0] == folder]
            return 200, {"entries": entries, "cursor": "AAEx", "has_more": False}
        if route == "files/create_folder_v2":
            if find(body["path"]) and not body.get("autorename"):
                return conflict("path/conflict/folder", {".tag": "path", "path": {".tag": "conflict"}})
            name = body["path"].rsplit("/", 1)[1]
            folder = {
                ".tag": "folder",
                "id": f"id:{name}",
                "name": name,
                "path_lower": body["path"].lower(),
                "path_display": body["path"],
            }
            files.append(folder)
            return 200, {"metadata": {k: v for k, v in folder.items() if k != ".tag"}}
        if route == "files/search_v2":
            hits = [f for f in files if body["query"].lower() in f["name"].lower()]
            return 200, {
                "matches": [
                    {"match_type": {".tag": "filename"}, "metadata": {".tag": "metadata", "metadata": f}} for f in hits
                ],
                "has_more": False,
            }
        source = find(body.get("from_path", body.get("path", "")))
        if source is None:
            tag = "from_lookup" if "from_path" in body else "path_lookup" if route == "files/delete_v2" else "path"
            return conflict(f"{tag}/not_found", {".tag": tag, tag: {".tag": "not_found"}})
        if route == "files/move_v2":
            source.update(path_lower=body["to_path"].lower(), path_display=body["to_path"])
            return 200, {"metadata": source}
        if route == "files/delete_v2":
            files.remove(source)
            return 200, {"metadata": source}
        return 200, {
            ".tag": source[".tag"],
            "url": f"https://www.dropbox.com/s/abc/{source['name']}?dl=0",
            "name": source["name"],
            "path_lower": source["path_lower"],
        }

    return handle


def dropbox_add(state: State, n: int) -> None:
    state["files"].append(
        {
            ".tag": "file",
            "id": f"id:new{n}",
            "name": f"new{n}.pdf",
            "path_lower": f"/new{n}.pdf",
            "path_display": f"/new{n}.pdf",
            "server_modified": f"2026-11-2{n}T00:00:00Z",
        }
    )


# --- GitLab: /api/v4, Bearer or PRIVATE-TOKEN, {"message": "401 Unauthorized"}, {"error": "x is missing"} -
GITLAB_PROJECT = {"id": 3, "path_with_namespace": "group/project", "name": "project"}
GITLAB_ORDER = {
    "created_at",
    "updated_at",
    "priority",
    "due_date",
    "relative_position",
    "label_priority",
    "milestone_due",
    "popularity",
    "weight",
    "title",
    "merged_at",
}


def gitlab(state: State) -> Callable[[Request], Reply]:
    issues = state.setdefault("issues", [])
    issues.append({"id": 70, "iid": 1, "project_id": 3, "title": "Seed", "created_at": "2026-11-01T00:00:00.000Z"})
    merge_requests = state.setdefault("merge_requests", [])

    def missing(body: dict[str, Any], *names: str) -> Reply | None:
        absent = [n for n in names if body.get(n) in (None, "")]
        return (400, {"error": ", ".join(f"{n} is missing" for n in absent)}) if absent else None

    def listed(items: list[dict[str, Any]], q: dict[str, str]) -> Reply:
        if q.get("order_by", "created_at") not in GITLAB_ORDER:
            return 400, {"error": "order_by does not have a valid value"}
        if q.get("sort", "desc") not in ("asc", "desc"):
            return 400, {"error": "sort does not have a valid value"}
        found = [i for i in items if not q.get("created_after") or i["created_at"] >= q["created_after"]]
        found.sort(key=lambda i: i[q.get("order_by", "created_at")], reverse=q.get("sort", "desc") == "desc")
        return 200, found[: int(q.get("per_page", "20"))]

    def handle(r: Request) -> Reply:
        bearer = r.headers.get("authorization") == f"Bearer {TOKEN}"
        if not (bearer or r.headers.get("private-token") == TOKEN):
            return 401, {"message": "401 Unauthorized"}
        q = {k: v[0] for k, v in r.query.items()}
        if not 1 <= int(q.get("per_page", "20")) <= 100:
            return 400, {"error": "per_page does not have a valid value"}
        if r.method == "POST" and not (_json_type(r) or r.form):
            return 415, {"error": "The provided content-type is not supported."}
        body = _body(r) or r.form
        path = r.path.removeprefix("/api/v4")
        if path == "/user":
            return 200, {"id": 1, "username": "ada"}
        if path == "/projects" and r.method == "GET":
            return 200, [GITLAB_PROJECT]
        m = re.fullmatch(r"/projects/([^/]+)/(issues|merge_requests)(?:/(\d+)/notes)?", path)
        # A project is its id or its URL-encoded path ("group%2Fproject": a raw "/" is another route).
        if m is None or unquote(m[1]) not in ("3", "group/project"):
            return 404, {"message": "404 Project Not Found"}
        if m[2] == "issues" and m[3] is None:
            if r.method == "GET":
                return listed(issues, q)
            problem = missing(body, "title")
            if problem:
                return problem
            issue = {
                "id": 70 + len(issues) + 1,
                "iid": len(issues) + 1,
                "project_id": 3,
                "title": body["title"],
                "description": body.get("description"),
                "labels": str(body.get("labels", "")).split(","),
                "created_at": "2026-11-10T00:00:00.000Z",
            }
            issues.append(issue)
            return 201, issue
        if m[2] == "issues":
            if not any(i["iid"] == int(m[3]) for i in issues):
                return 404, {"message": "404 Issue Not Found"}
            problem = missing(body, "body")
            return problem or (201, {"id": 302, "body": body["body"], "noteable_iid": int(m[3])})
        if r.method == "GET":
            return listed(merge_requests, q)
        problem = missing(body, "source_branch", "target_branch", "title")
        if problem:
            return problem
        if body["source_branch"] == body["target_branch"]:
            return 422, {"message": ["You can't use same project/branch for source and target"]}
        mr = {
            "id": len(merge_requests) + 1,
            "iid": len(merge_requests) + 1,
            "title": body["title"],
            "created_at": "2026-11-10T00:00:00.000Z",
        }
        merge_requests.append(mr)
        return 201, mr

    return handle


def gitlab_add(state: State, n: int) -> None:
    state["issues"].append(
        {"id": 90 + n, "iid": 10 + n, "project_id": 3, "title": f"New {n}", "created_at": f"2026-11-2{n}T00:00:00.000Z"}
    )


# --- HubSpot CRM v3: Bearer, {"status": "error", "message", "correlationId", "category"} ------------------
HUBSPOT_PROPERTIES = {
    "contacts": {"email", "firstname", "lastname", "phone", "company", "createdate"},
    "companies": {"name", "domain", "createdate"},
    "deals": {"dealname", "amount", "pipeline", "dealstage", "createdate"},
}
HUBSPOT_PIPELINE = {
    "id": "default",
    "label": "Sales Pipeline",
    "stages": [{"id": "appointmentscheduled", "label": "Appointment Scheduled"}, {"id": "closedwon", "label": "Won"}],
}
HUBSPOT_OPERATORS = {
    "EQ",
    "NEQ",
    "LT",
    "LTE",
    "GT",
    "GTE",
    "BETWEEN",
    "IN",
    "NOT_IN",
    "HAS_PROPERTY",
    "NOT_HAS_PROPERTY",
    "CONTAINS_TOKEN",
    "NOT_CONTAINS_TOKEN",
}


def hubspot(state: State) -> Callable[[Request], Reply]:
    for kind in HUBSPOT_PROPERTIES:
        state.setdefault(kind, [])
    state["contacts"].append(
        {
            "id": "512",
            "properties": {"email": "old@example.com", "createdate": "2026-11-01T00:00:00Z"},
            "createdAt": "2026-11-01T00:00:00Z",
        }
    )

    def error(status: int, category: str, message: str) -> Reply:
        return status, {"status": "error", "message": message, "correlationId": "4a7a4f4c-0b1b", "category": category}

    def invalid(kind: str, properties: Any) -> Reply | None:
        if not isinstance(properties, dict):
            return error(400, "VALIDATION_ERROR", "Invalid input JSON: properties must be an object")
        unknown = [p for p in properties if p not in HUBSPOT_PROPERTIES[kind]]
        if unknown:
            return error(
                400,
                "VALIDATION_ERROR",
                f'Property values were not valid: [{{"error":"PROPERTY_DOESNT_EXIST","name":"{unknown[0]}"}}]',
            )
        stage = properties.get("dealstage")
        if kind == "deals" and stage not in (None, *[s["id"] for s in HUBSPOT_PIPELINE["stages"]]):
            return error(400, "VALIDATION_ERROR", f"{stage} is not a valid deal stage")
        return None

    def search(kind: str, body: dict[str, Any]) -> Reply:
        found = list(state[kind])
        for group in body.get("filterGroups", []):
            for f in group.get("filters", []):
                if not f.get("propertyName") or f.get("operator") not in HUBSPOT_OPERATORS:
                    return error(
                        400, "VALIDATION_ERROR", "Invalid filter: propertyName and a known operator are required"
                    )
                if f["operator"] == "EQ":
                    if f.get("value") in (None, ""):
                        return error(400, "VALIDATION_ERROR", "Operator EQ requires a value")
                    found = [x for x in found if x["properties"].get(f["propertyName"]) == f["value"]]
        for sort in reversed(body.get("sorts", [])):
            if not isinstance(sort, dict) or sort.get("direction") not in ("ASCENDING", "DESCENDING"):
                return error(400, "VALIDATION_ERROR", "Invalid sort: propertyName and direction are required")
            found.sort(
                key=lambda x: str(x["properties"].get(sort["propertyName"], "")),
                reverse=sort["direction"] == "DESCENDING",
            )
        limit = body.get("limit", 10)
        if not isinstance(limit, int) or not 1 <= limit <= 200:
            return error(400, "VALIDATION_ERROR", "limit must be between 1 and 200")
        wanted = set(body.get("properties") or ["createdate"]) | {"hs_object_id"}
        results = [{**x, "properties": {k: v for k, v in x["properties"].items() if k in wanted}} for x in found]
        return 200, {"total": len(results), "results": results[:limit]}

    def handle(r: Request) -> Reply:
        if r.headers.get("authorization") != f"Bearer {TOKEN}":
            return error(401, "INVALID_AUTHENTICATION", "Authentication credentials not found.")
        if r.method in ("POST", "PATCH") and not _json_type(r):
            return error(415, "VALIDATION_ERROR", "HTTP 415 Unsupported Media Type")
        body = _body(r)
        if r.path == "/account-info/v3/details":
            return 200, {"portalId": 62515, "timeZone": "Europe/Berlin", "companyCurrency": "EUR"}
        if r.path == "/crm/v3/pipelines/deals" and r.method == "GET":
            return 200, {"results": [HUBSPOT_PIPELINE]}
        m = re.fullmatch(r"/crm/v3/objects/(contacts|companies|deals)(?:/([^/]+))?", r.path)
        if m and m[2] == "search" and r.method == "POST":
            return search(m[1], body)
        if m and m[2] is None and r.method == "POST":
            problem = invalid(m[1], body.get("properties"))
            if problem:
                return problem
            email = body["properties"].get("email")
            twin = next((x for x in state[m[1]] if email and x["properties"].get("email") == email), None)
            if twin:
                return error(409, "CONFLICT", f"Contact already exists. Existing ID: {twin['id']}")
            item = {
                "id": str(1000 + len(state[m[1]])),
                "properties": {**body["properties"], "createdate": "2026-11-10T00:00:00Z"},
                "createdAt": "2026-11-10T00:00:00Z",
                "archived": False,
            }
            state[m[1]].append(item)
            return 201, item
        if m and m[2] and r.method == "PATCH":
            item = next((x for x in state[m[1]] if x["id"] == m[2]), None)
            if item is None:
                return error(404, "OBJECT_NOT_FOUND", "resource not found")
            problem = invalid(m[1], body.get("properties"))
            if problem:
                return problem
            item["properties"].update(body["properties"])
            return 200, item
        return error(404, "OBJECT_NOT_FOUND", "resource not found")

    return handle


def hubspot_add(state: State, n: int) -> None:
    stamp = f"2026-11-2{n}T00:00:00Z"
    state["contacts"].append(
        {"id": str(2000 + n), "properties": {"email": f"new{n}@example.com", "createdate": stamp}, "createdAt": stamp}
    )


VALUES: dict[str, dict[str, dict[str, Any]]] = {
    "airtable": {
        "new_record": {"baseId": AIRTABLE_BASE, "tableIdOrName": "Contacts", "sort_field": "Signed up"},
        "create_record": {
            "baseId": AIRTABLE_BASE,
            "tableIdOrName": "Contacts",
            "fields": json.dumps({"Name": "Ada", "Email": "ada@example.com"}),
        },
        "update_record": {
            "baseId": AIRTABLE_BASE,
            "tableIdOrName": "tbltp8DGLhqbUmjK1",
            "recordId": "recSEED000000001",
            "fields": '{"Name": "Old, renamed"}',
        },
        "delete_record": {"baseId": AIRTABLE_BASE, "tableIdOrName": "Contacts", "recordId": "recSEED000000001"},
        "find_records": {
            "baseId": AIRTABLE_BASE,
            "tableIdOrName": "Contacts",
            "filterByFormula": "{Email} = 'ada@example.com'",
        },
        "list_tables": {"baseId": AIRTABLE_BASE},
        "list_fields": {"baseId": AIRTABLE_BASE, "tableIdOrName": "Deals"},
    },
    "calendly": {
        "new_scheduled_event": {"user": CALENDLY_USER},
        "create_scheduling_link": {"owner": CALENDLY_TYPE},
        "cancel_event": {"uuid": "SEED", "reason": "Conflict"},
        "mark_no_show": {"invitee": f"{CALENDLY}/scheduled_events/SEED/invitees/III"},
        "list_event_types": {"user": CALENDLY_USER},
    },
    "discord": {
        "new_message": {"guild_id": DISCORD_GUILD, "channel_id": DISCORD_CHANNEL},
        "send_message": {"guild_id": DISCORD_GUILD, "channel_id": DISCORD_CHANNEL, "content": "Hello"},
        "edit_message": {"channel_id": DISCORD_CHANNEL, "message_id": "1180000000000000000", "content": "Edited"},
        "add_reaction": {"channel_id": DISCORD_CHANNEL, "message_id": "1180000000000000000", "emoji": "👍"},
        "delete_message": {"channel_id": DISCORD_CHANNEL, "message_id": "1180000000000000001"},
        "list_channels": {"guild_id": DISCORD_GUILD},
    },
    "dropbox": {
        "new_file": {},  # the root folder
        "create_folder": {"path": "/Invoices"},
        "move_file": {"from_path": "/report.pdf", "to_path": "/Invoices/report.pdf"},
        "delete_file": {"path": "/old.txt"},
        "create_shared_link": {"path": "/Invoices/report.pdf"},
        "find_files": {"query": "report"},
    },
    "gitlab": {
        "new_issue": {"id": "3"},
        "new_merge_request": {"id": "3"},
        "create_issue": {"id": "group/project", "title": "Broken link", "labels": "bug,docs"},
        "create_issue_note": {"id": "3", "issue_iid": "1", "body": "Thanks"},
        "create_merge_request": {"id": "3", "source_branch": "fix", "title": "Fix"},
    },
    "hubspot": {
        "create_contact": {"email": "ada@example.com", "firstname": "Ada", "company": "Analytical Engines"},
        "update_contact": {"contactId": "512", "phone": "+44 20 7946 0000"},
        "create_company": {"name": "Acme", "domain": "acme.com"},
        "create_deal": {"dealname": "Big deal", "amount": "5000", "pipeline": "default"},
        "find_contact": {"email": "ada@example.com"},
    },
}
CASES: dict[str, Case] = {
    "airtable": Case(airtable, "/v0", "new_record", airtable_add, VALUES["airtable"]),
    "calendly": Case(calendly, "", "new_scheduled_event", calendly_add, VALUES["calendly"]),
    "discord": Case(discord, "/api/v10", "new_message", discord_add, VALUES["discord"]),
    "dropbox": Case(dropbox, "/2", "new_file", dropbox_add, VALUES["dropbox"]),
    "gitlab": Case(gitlab, "/api/v4", "new_issue", gitlab_add, VALUES["gitlab"]),
    "hubspot": Case(hubspot, "", "new_contact", hubspot_add, VALUES["hubspot"]),
}


def _sent(fake: Fake, method: str, pattern: str) -> list[Request]:
    return [r for r in fake.requests if r.method == method and re.fullmatch(pattern, r.path)]


def check_airtable(app: App, fake: Fake, state: State) -> None:
    created = _sent(fake, "POST", rf"/v0/{AIRTABLE_BASE}/Contacts")[0].json
    assert created == {"typecast": True, "fields": {"Name": "Ada", "Email": "ada@example.com"}}
    polls = _sent(fake, "GET", rf"/v0/{AIRTABLE_BASE}/Contacts")
    assert polls[-1].query["sort[0][field]"] == ["Signed up"] and polls[-1].query["sort[0][direction]"] == ["desc"]


def check_dropbox(app: App, fake: Fake, state: State) -> None:
    polls = _sent(fake, "POST", "/2/files/list_folder")
    assert polls and all(p.json == {"path": "", "recursive": False, "include_deleted": False} for p in polls)
    assert [f["path_display"] for f in state["files"] if f["name"] == "report.pdf"] == ["/Invoices/report.pdf"]


def check_gitlab(app: App, fake: Fake, state: State) -> None:
    # The project path is one URL-encoded segment; later polls ask only for issues since the newest seen.
    assert _sent(fake, "POST", "/api/v4/projects/group%2Fproject/issues")
    polls = _sent(fake, "GET", "/api/v4/projects/3/issues")
    assert "created_after" not in polls[-3].query and polls[-1].query["created_after"] == ["2026-11-22T00:00:00Z"]


def check_discord(app: App, fake: Fake, state: State) -> None:
    assert _sent(fake, "PUT", r"/api/v10/channels/\d+/messages/\d+/reactions/%F0%9F%91%8D/@me")
    assert state["messages"][0]["content"] == "Edited" and state["messages"][0]["reactions"] == ["👍"]


def check_hubspot(app: App, fake: Fake, state: State) -> None:
    created = _sent(fake, "POST", "/crm/v3/objects/contacts")[0].json
    assert created == {"properties": {"email": "ada@example.com", "firstname": "Ada", "company": "Analytical Engines"}}
    found = _sent(fake, "POST", "/crm/v3/objects/contacts/search")[0].json
    assert found["filterGroups"] == [
        {"filters": [{"value": "ada@example.com", "propertyName": "email", "operator": "EQ"}]}
    ]
    deal = _sent(fake, "POST", "/crm/v3/objects/deals")[0].json
    assert deal["properties"] == {
        "dealname": "Big deal",
        "amount": 5000.0,
        "pipeline": "default",
        "dealstage": "appointmentscheduled",
    }


def check_calendly(app: App, fake: Fake, state: State) -> None:
    link = _sent(fake, "POST", "/scheduling_links")[0].json
    assert link == {"max_event_count": 1, "owner_type": "EventType", "owner": CALENDLY_TYPE}


CHECKS: dict[str, Callable[[App, Fake, State], None]] = {
    "airtable": check_airtable,
    "calendly": check_calendly,
    "discord": check_discord,
    "dropbox": check_dropbox,
    "gitlab": check_gitlab,
    "hubspot": check_hubspot,
}


@pytest.mark.parametrize("key", list(CASES))
async def test_curated_app_against_its_fake(key: str, make_ctx: Any) -> None:
    app, fake, state = await exercise(key, CASES[key], make_ctx)
    CHECKS[key](app, fake, state)


@pytest.mark.parametrize(
    ("table", "names"),
    [("Deals", ["Title", "Amount"]), ("tbltp8DGLhqbUmjK1", ["Name", "Email", "Signed up"]), ("Nope", [])],
)
async def test_airtable_fields_are_those_of_the_chosen_table(table: str, names: list[str], make_ctx: Any) -> None:
    """Airtable lists every table of a base; the fields offered (dynamic options, fetch-fields) are the
    chosen table's, by id or name (``output.pick``), not the first table's."""
    fake = Fake(airtable({}))
    app = CURATED["airtable"].model_copy(update={"base_url": fake.url + "/v0"})

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return {"access_token": TOKEN}

    app_event.set_catalogue(lambda: Catalogue(apps=[app]))
    app_event.set_credential_source(source)
    try:
        step = _step(app, "list_fields", {"baseId": AIRTABLE_BASE, "tableIdOrName": table})
        outcome = await app_event.run(step, make_ctx())
    finally:
        app_event.set_credential_source(None)
        app_event.set_catalogue(app_event.default_catalogue)
        fake.stop()
    assert outcome.status == "SUCCESS", outcome.error
    assert [f["name"] for f in outcome.output["items"]] == names


@pytest.mark.parametrize(
    ("key", "label"),
    [("airtable", "ada@example.com"), ("calendly", "ada@example.com"), ("discord", "konnectz-bot"),
     ("dropbox", "ada@example.com"), ("gitlab", "ada"), ("hubspot", 62515)],
)  # fmt: skip
async def test_account_test_request_names_the_account(key: str, label: Any) -> None:
    """The request that must pass before an account is saved (``auth.test``) is one the API takes
    (Dropbox: a POST without a body), and its ``label_path`` names the account."""
    case = CASES[key]
    fake = Fake(case.handler({}))
    app = CURATED[key].model_copy(update={"base_url": fake.url + case.base_path})
    credentials = {f.key: TOKEN for f in app.auth.fields} | {"access_token": TOKEN}
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            request = build_test_request(app, credentials)
            assert request is not None and app.auth.test is not None
            reply = await http.send(request.to_httpx(http))
            assert reply.status_code == 200, reply.text
            assert dig(reply.json(), app.auth.test.label_path) == label
            request = build_test_request(app, {k: "wrong" for k in credentials})
            assert request is not None
            assert (await http.send(request.to_httpx(http))).status_code == 401
    finally:
        fake.stop()


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

    from konnectz_api.services.app_webhooks import subscription_id
    from konnectz_contracts.manifest import WebhookSubscription
    from konnectz_contracts.refs import resolve
    from konnectz_runner.ingress.signatures import verify_signature

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
