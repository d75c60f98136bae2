"""Secrets typed into steps (an API call's header or query parameter marked secret), opened at run time.

The api stores such a value encrypted (exactly as app credentials: :mod:`konnectz_api.core.crypto`)
and compiles it into the step as ``KeyValue.sealed``, never as plain text, so neither the published
spec (the ``Konnect`` resource, the run messages) nor the draft holds it. When the step runs, the
runner asks the api's broker for the plain values, like an app account's credentials: ``POST
.../internal/step_secrets`` beside ``KONNECTZ_CREDENTIALS_URL`` with the konnect-scoped token
(:mod:`konnectz_contracts.broker_token`). The api opens only values sealed for that konnect.

Each value is bound to the origin (scheme, host, port) of the endpoint URL it was typed for; the
step sends it only to that origin (:func:`check_origin`), so changing a flow's URL, or mapping the
host from trigger data, cannot send the secret elsewhere: it has to be typed again.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import httpx

from konnectz_contracts.broker_token import ENV_KEY, ENV_TOKEN, ENV_URL, token_for
from konnectz_contracts.errors import StepError

__all__ = ["broker_step_secrets", "check_origin", "origin_of", "secrets_url"]


def secrets_url(credentials_url: str) -> str:
    """``.../internal/credentials`` → ``.../internal/step_secrets``."""
    return credentials_url.rstrip("/").rsplit("/", 1)[0] + "/step_secrets"


def origin_of(url: str | httpx.URL) -> str | None:
    """``scheme://host:port`` of a URL (port made explicit), or None when it has no plain host
    (a reference such as ``{{node-1.url}}`` in place of the host, or not a URL)."""
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    host = parsed.host
    if parsed.scheme not in ("http", "https") or not host or "{" in host or "}" in host:
        return None
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return f"{parsed.scheme}://{host.lower()}:{port}"


def check_origin(name: str, typed_for: str | None, target: httpx.URL) -> None:
    """Refuse to send a secret to another origin than the one it was typed for."""
    if typed_for is None or typed_for != origin_of(target):
        where = typed_for or "an endpoint URL whose host is not typed"
        raise StepError(
            f"The secret {name!r} was typed for {where}; this request goes to {origin_of(target) or target.host}, "
            "so it was not sent. Type the secret again in the step for this endpoint."
        )


async def broker_step_secrets(konnect_id: int, sealed: Sequence[str]) -> list[tuple[str, str | None]]:
    """Ask the api to open ``sealed`` values of konnect ``konnect_id``: ``[(value, origin)]`` in order."""
    url = os.environ.get(ENV_URL)
    token = token_for(konnect_id)
    if not url or not token:
        raise StepError(
            f"No credential broker configured ({ENV_URL} and {ENV_TOKEN} or {ENV_KEY} must be set): "
            "the step's secret values cannot be read"
        )
    async with httpx.AsyncClient(timeout=20) as http:
        response = await http.post(
            secrets_url(url),
            json={"konnect_id": konnect_id, "sealed": list(sealed)},
            headers={"Authorization": f"Bearer {token}"},
        )
    if response.status_code != 200:
        raise StepError(f"The step's secret values could not be read (HTTP {response.status_code} from the broker)")
    secrets = response.json().get("secrets")
    if not isinstance(secrets, list) or len(secrets) != len(sealed):
        raise StepError("The broker answered without the step's secret values")
    out: list[tuple[str, str | None]] = []
    for item in secrets:
        if not isinstance(item, dict) or not isinstance(item.get("value"), str):
            raise StepError("The broker answered without the step's secret values")
        origin = item.get("origin")
        out.append((item["value"], origin if isinstance(origin, str) else None))
    return out
