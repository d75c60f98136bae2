"""Building the HTTP request of a manifest event, and reading its reply.

Pure functions shared by the runner's ``app_event`` step and the api (account test requests,
dynamic options): an event's :class:`~konnectz_contracts.manifest.Operation`, the values of its
fields and an account's credentials make one :class:`AppRequest`; the credentials go where the
app's ``auth`` says (header, query or body injections, or HTTP basic).

Templates (``{{auth.api_key}}``, ``{{input.channel}}``) are looked up with
:mod:`konnectz_contracts.refs`, never evaluated.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from konnectz_contracts.errors import StepError
from konnectz_contracts.manifest import (
    App,
    Event,
    EventField,
    ExpiryRule,
    Operation,
    Output,
    TestRequest,
    template_refs,
)
from konnectz_contracts.refs import lookup, resolve

__all__ = [
    "AppRequest",
    "MissingFields",
    "build_app_request",
    "build_event_request",
    "build_test_request",
    "dig",
    "hook_error",
    "is_expired",
    "items_at",
    "picked",
    "secret_values",
]


# ``body_path: "$"``: the field's value (a JSON object) is the body itself, merged with the other members.
WHOLE_BODY = "$"

# Characters a path segment may carry unencoded (RFC 3986 pchar without "/"): ARNs keep their colons.
_PCHAR = ":@!$&'()*+,;=-._~"


class MissingFields(StepError):
    """Required fields of an event have no value."""

    def __init__(self, labels: list[str]) -> None:
        super().__init__("Missing required fields: " + ", ".join(labels))
        self.labels = labels


@dataclass
class AppRequest:
    method: str
    url: str
    params: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    json_body: Any = None
    form_body: dict[str, str] | list[tuple[str, str]] | None = None
    secret_headers: list[str] = field(default_factory=list)
    secret_params: list[str] = field(default_factory=list)
    # Signs the built request (the aws_sigv4 hook); its headers never reach a log.
    signer: Callable[[httpx.Request], None] | None = None

    def to_httpx(self, http: httpx.AsyncClient) -> httpx.Request:
        headers = dict(self.headers)
        content: bytes | None = None
        if self.json_body is not None:
            content = json.dumps(self.json_body, ensure_ascii=False).encode()
            headers.setdefault("Content-Type", "application/json")
        elif self.form_body is not None:
            content = urlencode(self.form_body).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        url = httpx.URL(self.url)
        if self.params:
            url = url.copy_merge_params(httpx.QueryParams(list[tuple[str, Any]](self.params)))
        built = http.build_request(self.method, url, headers=headers, content=content)
        if self.signer is not None:
            self.signer(built)
        return built

    def recorded(self) -> dict[str, Any]:
        """What a task log may show: credentials replaced by ``***``."""
        return {
            "method": self.method,
            "url": self.url,
            "params": [[k, "***" if k in self.secret_params else v] for k, v in self.params],
            "headers": {k: "***" if k in self.secret_headers else v for k, v in self.headers.items()},
            **({"body": self.json_body} if self.json_body is not None else {}),
            **({"body": self.form_body} if self.form_body is not None else {}),
        }


def dig(data: Any, path: str | None) -> Any:
    """The value at a dotted path (``a.b.0.c``); ``None`` or ``""`` is ``data`` itself; missing is ``None``."""
    if not path:
        return data
    try:
        return lookup(f"x.{path}", {"x": data})
    except KeyError:
        return None


def items_at(body: Any, path: str | None) -> list[Any]:
    """The list of items of a reply (``output.items_path``); a single object is one item."""
    value = dig(body, path)
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def picked(output: Output, body: Any, values: dict[str, Any]) -> Any:
    """The reply narrowed by ``output.pick`` (the element of a list chosen by a field's value), or
    the reply itself when the event has no pick; None when no element matches."""
    pick = output.pick
    if pick is None:
        return body
    wanted = resolve(pick.equals, {"input": values})
    for element in items_at(body, pick.list_path):
        if wanted and isinstance(element, dict) and any(_text(element.get(m)) == wanted for m in pick.match):
            return element
    return None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _coerce(f: EventField, value: Any) -> Any:
    """Typed values for JSON bodies: ``"3"`` for an integer field becomes 3."""
    if not isinstance(value, str):
        return value
    try:
        if f.type == "integer":
            return int(value)
        if f.type == "number":
            return float(value)
        if f.type == "boolean":
            if value.lower() in ("true", "yes", "1"):
                return True
            if value.lower() in ("false", "no", "0"):
                return False
        if f.type in ("array", "object") and value.strip()[:1] in ("[", "{"):
            return json.loads(value)
    except ValueError as exc:
        raise StepError(f"{f.label}: {value!r} is not a valid {f.type}") from exc
    return value


def _set_path(body: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at a dotted body path; a numeric segment is a list index (``to.0.email``)."""
    parts = path.split(".")
    conflict = StepError(f"Body path {path!r} conflicts with another field")
    node: Any = body
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        empty: Any = None if last else ([] if parts[i + 1].isdigit() else {})
        if isinstance(node, list):
            if not part.isdigit() or int(part) > len(node) or int(part) >= 100:
                raise conflict
            index = int(part)
            if index == len(node):
                node.append(empty)
            if last:
                node[index] = value
                return
            if node[index] is None:
                node[index] = empty
            node = node[index]
        else:
            if last:
                node[part] = value
                return
            node = node.setdefault(part, empty)
        if type(node) is not type(empty):
            raise conflict


def _repeated_form(body: dict[str, Any]) -> list[tuple[str, str]]:
    """A form whose arrays repeat their key (``ids=1&ids=2``, OpenAPI's default); objects stay indexed."""
    pairs: list[tuple[str, str]] = []
    for key, value in body.items():
        if isinstance(value, list) and not any(isinstance(item, dict | list) for item in value):
            pairs.extend((key, _text(item)) for item in value if item is not None)
        else:
            pairs.extend(_flatten_form({key: value}).items())
    return pairs


def _flatten_form(body: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested form keys the way Stripe reads them: ``metadata[plan]=pro``, ``ids[0]=1``."""
    flat: dict[str, str] = {}
    for key, value in body.items():
        name = f"{prefix}[{key}]" if prefix else key
        if isinstance(value, dict):
            flat.update(_flatten_form(value, name))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    flat.update(_flatten_form(item, f"{name}[{index}]"))
                else:
                    flat[f"{name}[{index}]"] = _text(item)
        elif value is not None:
            flat[name] = _text(value)
    return flat


def _templated(value: Any, context: dict[str, Any]) -> Any:
    """A copy of ``value`` with every string resolved as a template over ``context`` (lookups, never code)."""
    if isinstance(value, str):
        return resolve(value, context)
    if isinstance(value, dict):
        return {k: _templated(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [_templated(v, context) for v in value]
    return value


def _context(credentials: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    return {"auth": credentials, "input": values}


def _blank(context: dict[str, Any], reference: str) -> bool:
    try:
        return lookup(reference, context) in (None, "")
    except KeyError:
        return True


def _inject_auth(app: App, request: AppRequest, credentials: dict[str, Any], body: dict[str, Any] | None) -> None:
    context = _context(credentials, {})
    auth = app.auth
    for injection in auth.inject:
        refs = template_refs(injection.value)
        if refs and all(_blank(context, ref) for ref in refs):
            continue  # an optional credential left empty (a local model server without a key): nothing to send
        value = resolve(injection.value, context)
        if injection.location == "header":
            request.headers[injection.name] = value
            request.secret_headers.append(injection.name)
        elif injection.location == "query":
            request.params.append((injection.name, value))
            request.secret_params.append(injection.name)
        elif body is not None:
            body[injection.name] = value
    if auth.basic is not None:
        user = resolve(auth.basic.username, context)
        password = resolve(auth.basic.password, context)
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        request.headers["Authorization"] = f"Basic {token}"
        request.secret_headers.append("Authorization")


def _sign_if_needed(app: App, hooks: Sequence[str], request: AppRequest, credentials: dict[str, Any]) -> None:
    if "aws_sigv4" in hooks:
        from konnectz_runner.apps.aws_sigv4 import signer  # import-ok: botocore loads only for AWS apps

        request.signer = signer(credentials, request.url, app.auth.aws_service)
        request.secret_headers.append("Authorization")


def _base_url(app: App, override: str | None, credentials: dict[str, Any]) -> str:
    base = resolve(override or app.base_url, _context(credentials, {}))
    return base.rstrip("/")


def build_event_request(
    app: App,
    event: Event,
    values: dict[str, Any],
    credentials: dict[str, Any],
    *,
    extra_params: list[tuple[str, str]] | None = None,
) -> AppRequest:
    """The request of ``event`` for these field values and credentials.

    Empty optional fields are left out; a required field without value (and without default)
    raises :class:`MissingFields`. Fields with location ``none`` only narrow other fields' options.
    """
    op: Operation | None = event.operation
    if op is None:
        raise StepError(f"{event.label} is run by the {event.step_kind} step, not by an HTTP request")
    missing: list[str] = []
    resolved: dict[str, Any] = {}
    for f in event.fields:
        value = values.get(f.key)
        if value is None or value == "":
            value = f.default
        if value is None or value == "":
            if f.required and f.location != "none":
                missing.append(f.label)
            continue
        resolved[f.key] = _coerce(f, value)
    if missing:
        raise MissingFields(missing)
    context = _context(credentials, resolved)
    path = op.path
    for f in event.fields:
        if f.location == "path":
            path = path.replace("{" + f.wire_name + "}", quote(_text(resolved[f.key]), safe=_PCHAR))
    path = path.split("#", 1)[0]  # AWS documents tell operations apart with a "#Action" suffix
    request = AppRequest(method=op.method, url=_base_url(app, op.base_url, credentials) + path)
    request.params.extend((k, resolve(v, context)) for k, v in op.query.items())
    request.headers.update({k: resolve(v, context) for k, v in op.headers.items()})
    body: dict[str, Any] | None = None
    if op.method != "GET" and op.content_type != "none":
        body = _templated(op.body, context)  # a copy of the static members, templates resolved as the query's
    for f in event.fields:
        if f.key not in resolved:
            continue
        value = resolved[f.key]
        if f.location == "query":
            items = value if isinstance(value, list) else [value]
            request.params.extend((f.wire_name, _text(v)) for v in items)
        elif f.location == "header":
            request.headers[f.wire_name] = _text(value)
        elif f.location == "body" and body is not None:
            if f.path_in_body == WHOLE_BODY:  # the value is the body (Salesforce's sObject fields)
                if not isinstance(value, dict):
                    raise StepError(f"{f.label}: a JSON object is expected")
                body.update(value)
            else:
                _set_path(body, f.path_in_body, value)
    if extra_params:
        request.params.extend(extra_params)
    hooks = [*app.hooks, *event.hooks]
    if "gmail_raw_message" in hooks and body is not None:
        body = gmail_raw_body(body, draft=op.path.rstrip("/").endswith("/drafts"))
    _inject_auth(app, request, credentials, body)
    _sign_if_needed(app, hooks, request, credentials)
    if body is not None:
        if op.content_type == "json":
            request.json_body = body
        elif op.form_arrays == "repeat":
            request.form_body = _repeated_form(body)
        else:
            request.form_body = _flatten_form(body)
    return request


def build_app_request(
    app: App, method: str, path: str, credentials: dict[str, Any], json_body: Any = None
) -> AppRequest:
    """A request of ``app`` that no manifest event describes (a step kind's own, e.g. Ask AI's chat
    completion): the app's base URL (templated from the account's fields) + ``path``, with the account's
    credentials placed where the app's auth says, as for its events."""
    request = AppRequest(method=method, url=_base_url(app, None, credentials) + path)
    body: dict[str, Any] | None = json_body if isinstance(json_body, dict) else None
    _inject_auth(app, request, credentials, body)
    _sign_if_needed(app, app.hooks, request, credentials)
    request.json_body = json_body
    return request


def build_test_request(app: App, credentials: dict[str, Any]) -> AppRequest | None:
    """The request that proves an account works (``auth.test``), or None when the app has none."""
    test: TestRequest | None = app.auth.test
    if test is None:
        return None
    context = _context(credentials, {})
    request = AppRequest(method=test.method, url=_base_url(app, test.base_url, credentials) + test.path)
    request.params.extend((k, resolve(v, context)) for k, v in test.query.items())
    body = dict(test.body) if test.body is not None else None
    _inject_auth(app, request, credentials, body)
    _sign_if_needed(app, app.hooks, request, credentials)
    if body is not None:
        request.json_body = body
    return request


def is_expired(rules: list[ExpiryRule], status: int, body: Any) -> bool:
    """True when a reply means the access token expired (by status, or a value inside the body)."""
    for rule in rules:
        if rule.body_path:
            value = dig(body, rule.body_path)
            if (
                value is not None
                and _text(value) in rule.equals
                and (not rule.status or status in rule.status or status < 300)
            ):
                return True
        elif status in rule.status:
            return True
    return False


def hook_error(hooks: Sequence[str], body: Any) -> str | None:
    """Errors some APIs report inside a 200 reply (the ``*_ok_false`` hooks)."""
    if isinstance(body, dict) and body.get("ok") is False:
        if "slack_ok_false" in hooks:
            return f"Slack error: {body.get('error', 'unknown')}"
        if "telegram_ok_false" in hooks:
            return f"Telegram error: {body.get('description', 'unknown')}"
    return None


_MESSAGE_FIELDS = ("to", "cc", "bcc", "subject", "body", "is_html", "from", "reply_to")


def gmail_raw_body(fields: dict[str, Any], *, draft: bool = False) -> dict[str, Any]:
    """The ``gmail_raw_message`` hook: to/cc/bcc/subject/body as an RFC 2822 message, base64url in ``raw``.

    Other body members (e.g. ``threadId``) stay beside ``raw``; a draft wraps it in ``message``.
    """
    message = EmailMessage()
    for header, key in (("To", "to"), ("Cc", "cc"), ("Bcc", "bcc"), ("From", "from"), ("Reply-To", "reply_to")):
        value = fields.get(key)
        if value not in (None, ""):
            text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            if "\r" in text or "\n" in text:
                raise StepError(f"{header} must be on one line")
            message[header] = text
    subject = str(fields.get("subject") or "")
    if "\r" in subject or "\n" in subject:
        raise StepError("Subject must be on one line")
    message["Subject"] = subject
    content = str(fields.get("body") or "")
    if fields.get("is_html") in (True, "true", "True", "1"):
        message.set_content(content, subtype="html")
    else:
        message.set_content(content)
    raw = base64.urlsafe_b64encode(message.as_bytes()).decode().rstrip("=")
    rest = {k: v for k, v in fields.items() if k not in _MESSAGE_FIELDS}
    return {**rest, "message": {"raw": raw}} if draft else {**rest, "raw": raw}


def rows_as_objects(rows: list[Any]) -> list[Any]:
    """The ``sheet_rows_as_objects`` hook: a values range (header row first) as objects with ``row_number``.

    Row numbers count from the header row (row 1), so a worksheet's rows keep their sheet numbers.
    """
    if not rows or not all(isinstance(r, list) for r in rows):
        return rows
    header = [str(h) if h not in (None, "") else f"Column {i + 1}" for i, h in enumerate(rows[0])]
    objects: list[Any] = []
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell not in (None, "") for cell in row):
            continue  # an empty row is not an item
        item: dict[str, Any] = {"row_number": number}
        for i, name in enumerate(header):
            item[name] = row[i] if i < len(row) else ""
        objects.append(item)
    return objects


def secret_values(app: App, credentials: dict[str, Any]) -> list[str]:
    """The credential values that must never appear in a log or a reply."""
    return [str(v) for k, v in credentials.items() if k in app.auth.secret_keys and v]
