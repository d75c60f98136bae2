"""The signing secrets of app webhook triggers, fetched from the api's broker and cached.

The api keeps each subscribed app webhook's secret encrypted; a runner asks
``KONNECTZ_CREDENTIALS_URL``'s sibling ``.../internal/webhook_secret`` with the konnect-scoped
token (:mod:`konnectz_contracts.broker_token`). A secret is cached for ``ttl`` seconds; a delivery
that does not verify refreshes it once (at most every ``min_refresh`` seconds), so a re-published
konnect's new secret is picked up without letting wrong signatures hammer the api.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable

import httpx

from konnectz_contracts.broker_token import ENV_URL, token_for
from konnectz_contracts.errors import StepError

__all__ = ["SecretCache", "broker_webhook_secret", "secret_url"]

SecretSource = Callable[[int], Awaitable[str]]


def secret_url(credentials_url: str) -> str:
    """``.../internal/credentials`` → ``.../internal/webhook_secret``."""
    return credentials_url.rstrip("/").rsplit("/", 1)[0] + "/webhook_secret"


async def broker_webhook_secret(konnect_id: int) -> str:
    url = os.environ.get(ENV_URL)
    token = token_for(konnect_id)
    if not url or not token:
        raise StepError("No credential broker configured: the webhook's signature cannot be checked")
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            secret_url(url), json={"konnect_id": konnect_id}, headers={"Authorization": f"Bearer {token}"}
        )
    if response.status_code != 200:
        raise StepError(f"The webhook secret could not be read (HTTP {response.status_code} from the broker)")
    secret = response.json().get("secret")
    if not isinstance(secret, str):
        raise StepError("The broker answered without a secret")
    return secret


class SecretCache:
    def __init__(self, source: SecretSource = broker_webhook_secret, *, ttl: float = 300, min_refresh: float = 10):
        self.source = source
        self.ttl = ttl
        self.min_refresh = min_refresh
        self._cache: dict[int, tuple[str, float]] = {}

    async def get(self, konnect_id: int, *, refresh: bool = False) -> str:
        now = time.monotonic()
        cached = self._cache.get(konnect_id)
        if cached is not None:
            secret, fetched = cached
            fresh_enough = now - fetched < (self.min_refresh if refresh else self.ttl)
            if fresh_enough:
                return secret
        secret = await self.source(konnect_id)
        self._cache[konnect_id] = (secret, now)
        return secret
