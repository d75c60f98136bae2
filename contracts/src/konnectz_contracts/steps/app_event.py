"""App event: one generic HTTP step that runs any manifest event (action, search or poll).

The step names an app (its catalogue id), an event key, the account to use and the field
values (which may carry references to earlier steps, ``{{node-1.email}}``). The request is
built from the manifest by :func:`konnectz_runner.apps.app_request.build_event_request`, with the
account's credentials placed where the app's auth says (header, query, body or HTTP basic).

- Credentials come from a :data:`CredentialSource` (by default the api, the credential broker:
  ``KONNECTZ_CREDENTIALS_URL`` with a token scoped to the konnect); a reply that means "token
  expired" (a status or a rule on the body) asks for a refreshed credential and retries once.
- 429 and 5xx are retried (at most ``rate_limit.max_retries`` times) honouring ``Retry-After``
  up to ``max_retry_after_seconds``; a 5xx is retried only for idempotent methods.
- Requests per account are spaced by ``rate_limit.requests_per_second``.
- Searches read up to ``pagination.max_pages`` pages (page numbers, offsets, a cursor in the body or the
  ``rel="next"`` URL of a ``Link`` header on the same origin); their output is ``{"items": [...]}``.
- Polling triggers: :func:`new_items` keeps the items not seen before and returns the next cursor.

Secrets never reach the task log: credential headers and params show as ``***``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from konnectz_contracts.model import KeyValue, StepBase

__all__ = ["KIND", "AppEventStep", "Config"]

KIND = "app_event"
ORDER = 10  # its place in the Step union (the CRD's oneOf order)


class AppEventStep(StepBase):
    """One manifest event of one app, with the account to use and the field values."""

    kind: Literal["app_event"] = "app_event"
    app_id: int = Field(ge=1, lt=2**31)
    event: str = Field(min_length=1, max_length=100)
    account_id: int | None = Field(default=None, ge=1, lt=2**63)
    fields: list[KeyValue] = Field(default_factory=list)


Config = AppEventStep
