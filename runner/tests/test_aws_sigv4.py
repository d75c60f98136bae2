"""The ``aws_sigv4`` hook: requests signed with botocore, verified by a local server that recomputes
the signature with botocore from what it received (as AWS does)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from konnectz_contracts.manifest import App
from konnectz_contracts.steps.app_event import AppEventStep
from konnectz_devstack.fake_apps import JsonHandler, LocalServer, curated_app
from konnectz_runner.apps import build_event_request, default_root
from konnectz_runner.apps.aws_sigv4 import signing_name
from konnectz_runner.engine import app_event

ACCESS_KEY, SECRET_KEY = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
    r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$"
)


def verify(method: str, url: str, headers: dict[str, str], body: bytes, secrets: dict[str, str]) -> str | None:
    """None when the request carries a valid Signature V4, else what is wrong."""
    lower = {k.lower(): v for k, v in headers.items()}
    found = _AUTH.match(lower.get("authorization", ""))
    if found is None:
        return "no SigV4 Authorization header"
    access_key, day, region, service, signed, signature = found.groups()
    if access_key not in secrets:
        return "unknown access key"
    amz_date = lower.get("x-amz-date", "")
    if not amz_date.startswith(day):
        return "X-Amz-Date does not match the credential scope"
    names = signed.split(";")
    if "host" not in names or "x-amz-date" not in names:
        return "host and x-amz-date must be signed"
    request = AWSRequest(method=method, url=url, data=body, headers={n: lower[n] for n in names if n in lower})
    request.context["timestamp"] = amz_date
    auth = SigV4Auth(Credentials(access_key, secrets[access_key]), service, region)
    canonical = auth.canonical_request(request)
    expected = auth.signature(auth.string_to_sign(request, canonical), request)
    if expected != signature:
        return "signature mismatch"
    if lower.get("x-amz-content-sha256") not in (None, auth.payload(request)):
        return "payload hash mismatch"
    return None


class Verifier:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.secrets = {ACCESS_KEY: SECRET_KEY}


@pytest.fixture
def server() -> Iterator[tuple[Verifier, str]]:
    state = Verifier()

    class Handler(JsonHandler):
        def _handle(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            url = f"http://{self.headers['Host']}{self.path}"
            problem = verify(self.command, url, dict(self.headers), body, state.secrets)
            state.received.append({"path": self.path, "headers": dict(self.headers), "problem": problem})
            self._reply(403 if problem else 200, {"message": problem} if problem else {"Ledger": {"Name": "orders"}})

        do_GET = do_POST = _handle

    local = LocalServer(Handler)
    yield state, local.url
    local.stop()


def _aws_app(base_url: str) -> App:
    fields = [
        {"key": "access_key_id", "label": "Access Key ID", "secret": False},
        {"key": "secret_access_key", "label": "Secret Access Key"},
        {"key": "region", "label": "Region", "secret": False, "default": "us-east-1"},
    ]
    return App.model_validate(
        curated_app(
            779,
            "fake_aws",
            "Fake AWS",
            {"type": "aws_sigv4", "fields": fields, "aws_service": "qldb"},
            base_url=base_url,
            hooks=["aws_sigv4"],
            events=[
                {
                    "key": "create_ledger",
                    "kind": "action",
                    "label": "Create Ledger",
                    "operation": {
                        "method": "POST",
                        "path": "/ledgers/{name}",
                        "headers": {"X-Amz-Target": "QLDB.CreateLedger"},
                        "query": {"mode": "a b/c"},
                    },
                    "fields": [
                        {"key": "name", "label": "Name", "location": "path", "required": True},
                        {"key": "PermissionsMode", "label": "Permissions Mode"},
                    ],
                },
                {
                    "key": "list_ledgers",
                    "kind": "search",
                    "label": "List Ledgers",
                    "operation": {"method": "GET", "path": "/ledgers"},
                    "fields": [{"key": "max", "label": "Max", "location": "query"}],
                },
            ],
        )
    )


@pytest.fixture
def wired(server, wire_apps) -> tuple[Verifier, dict[str, str]]:
    state, base = server
    account = {"access_key_id": ACCESS_KEY, "secret_access_key": SECRET_KEY, "region": "eu-west-1"}

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return dict(account)

    wire_apps([_aws_app(base)], source)
    return state, account


def _step(event: str, **fields: str) -> AppEventStep:
    return AppEventStep(
        id="node-2",
        name="AWS",
        app_id=779,
        event=event,
        account_id=3,
        fields=[{"key": k, "value": v} for k, v in fields.items()],
    )


async def test_signed_requests_pass_a_botocore_verification(wired, make_ctx) -> None:
    state, _ = wired
    outcome = await app_event.run(_step("create_ledger", name="orders:2026", PermissionsMode="STANDARD"), make_ctx())
    assert outcome.status == "SUCCESS", outcome.error
    sent = state.received[-1]
    assert sent["problem"] is None
    assert "/eu-west-1/qldb/aws4_request" in sent["headers"]["Authorization"]
    assert "x-amz-target" in sent["headers"]["Authorization"]  # the operation's headers are signed too
    assert sent["path"].startswith("/ledgers/orders:2026?mode=a+b%2Fc")
    logged = json.dumps(outcome.input)
    assert SECRET_KEY not in logged and "Signature=" not in logged
    outcome = await app_event.run(_step("list_ledgers", max="5"), make_ctx())
    assert outcome.status == "SUCCESS", outcome.error
    assert state.received[-1]["problem"] is None


async def test_a_wrong_secret_is_refused_by_the_verifier(wired, make_ctx) -> None:
    _, account = wired
    account["secret_access_key"] = "not-the-secret"
    outcome = await app_event.run(_step("list_ledgers"), make_ctx())
    assert outcome.status == "ERROR" and "HTTP 403" in outcome.error and "signature mismatch" in outcome.error
    assert "not-the-secret" not in outcome.error


async def test_missing_keys_are_a_step_error(wired, make_ctx) -> None:
    _, account = wired
    account["access_key_id"] = ""
    outcome = await app_event.run(_step("list_ledgers"), make_ctx())
    assert outcome.status == "ERROR" and "Access Key ID" in outcome.error


def test_signing_name_from_the_manifest_or_the_host() -> None:
    assert signing_name("https://qldb.us-east-1.amazonaws.com/x") == "qldb"
    assert signing_name("https://pinpoint.us-east-1.amazonaws.com", "mobiletargeting") == "mobiletargeting"


def test_generated_aws_apps_sign_with_their_signing_name() -> None:
    """Every generated AWS app builds a request that the verifier accepts (its own signing name)."""
    bundle = default_root() / "build" / "generated.json"
    if not bundle.is_file():
        pytest.fail("catalogue/build/generated.json is missing: run `make catalogue`")
    apps = [a for a in json.loads(bundle.read_bytes()) if "aws_sigv4" in a.get("hooks", [])]
    assert len(apps) > 300
    pinpoint = next(a for a in apps if a["key"] == "amazonaws-com-pinpoint")
    assert pinpoint["auth"]["aws_service"] == "mobiletargeting"
    account = {"access_key_id": ACCESS_KEY, "secret_access_key": SECRET_KEY, "region": "eu-central-1"}
    checked = 0
    for raw in apps[::25]:
        app = App.model_validate(raw)
        event = app.events[0]
        values = {f.key: "x1" for f in event.fields if f.required}
        request = build_event_request(app, event, values, account)
        with httpx.Client() as http:
            built = request.to_httpx(http)  # type: ignore[arg-type]
        body = built.read()
        headers = dict(built.headers)
        headers.setdefault("Host", built.url.netloc.decode())
        assert verify(built.method, str(built.url), headers, body, {ACCESS_KEY: SECRET_KEY}) is None, app.key
        service = app.auth.aws_service or signing_name(str(built.url))
        assert f"/eu-central-1/{service}/aws4_request" in headers["authorization"]
        checked += 1
    assert checked >= 12
