"""Approval requests (the ``approval`` step, docs/waits.md): the api records them and e-mails the links.

``POST .../internal/approvals`` beside ``KONNECTZ_CREDENTIALS_URL`` with the konnect-scoped token
(:mod:`konnectz_contracts.broker_token`), like the credential broker. The api answers the approvers it
accepted; a refusal (an approver who is neither the owner nor a named team member) is a StepError
with the api's reason. A request sent twice (a redelivered run) is recorded and mailed once.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

import httpx

from konnectz_contracts.broker_token import ENV_KEY, ENV_TOKEN, ENV_URL, token_for
from konnectz_contracts.errors import StepError

__all__ = ["approvals_url", "request_approval"]


def approvals_url(credentials_url: str) -> str:
    """``.../internal/credentials`` → ``.../internal/approvals``."""
    return credentials_url.rstrip("/").rsplit("/", 1)[0] + "/approvals"


async def request_approval(
    *, konnect_id: int, run_id: str, step_id: str, approvers: list[str], message: str, until: datetime
) -> dict[str, Any]:
    """Ask the api to record the approval and mail its links: its answer (``approvers``)."""
    url = os.environ.get(ENV_URL)
    token = token_for(konnect_id)
    if not url or not token:
        raise StepError(
            f"No api broker configured ({ENV_URL} and {ENV_TOKEN} or {ENV_KEY} must be set): "
            "the approval request cannot be sent"
        )
    body = {
        "konnect_id": konnect_id,
        "run_id": run_id,
        "step_id": step_id,
        "approvers": approvers,
        "message": message,
        "until": until.isoformat(),
    }
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(approvals_url(url), json=body, headers={"Authorization": f"Bearer {token}"})
    if response.status_code != 200:
        try:
            reason = response.json().get("message") or response.text
        except ValueError:
            reason = response.text
        raise StepError(f"The approval request was refused (HTTP {response.status_code}): {str(reason)[:300]}")
    answer: dict[str, Any] = response.json()
    return answer
