"""The token a runner shows the api's credential broker: it opens the accounts of one konnect only.

``konnect_token(key, K)`` is an HMAC of the konnect id K under the *credentials key*, a secret
shared by the api (which checks it) and whoever starts runners:

- a runner of one konnect (a Kubernetes Deployment or CronJob) gets the token itself, in
  ``KONNECTZ_CREDENTIALS_TOKEN`` from a Secret the operator renders; it never sees the key;
- a runner hosting many konnects (``make dev``, the shared pool) gets the key in
  ``KONNECTZ_CREDENTIALS_KEY`` and derives each konnect's token.

The key is not the api's signing key: a runner that holds it can read flow credentials but
cannot mint sign-in tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping

__all__ = ["ENV_KEY", "ENV_TOKEN", "ENV_URL", "derived_key", "konnect_token", "token_for"]

ENV_URL = "KONNECTZ_CREDENTIALS_URL"
ENV_TOKEN = "KONNECTZ_CREDENTIALS_TOKEN"  # noqa: S105 - the name of a variable
ENV_KEY = "KONNECTZ_CREDENTIALS_KEY"


def konnect_token(key: str, konnect_id: int) -> str:
    return hmac.new(key.encode(), f"konnect-credentials:{int(konnect_id)}".encode(), hashlib.sha256).hexdigest()


def derived_key(secret_key: str) -> str:
    """The credentials key used when none is configured: one-way from the api's secret key."""
    return hmac.new(secret_key.encode(), b"konnectz credentials key", hashlib.sha256).hexdigest()


def token_for(konnect_id: int, env: Mapping[str, str] | None = None) -> str | None:
    """This runner's token for ``konnect_id``, or None when it was given neither a token nor the key."""
    env = os.environ if env is None else env
    if env.get(ENV_TOKEN):
        return env[ENV_TOKEN]
    key = env.get(ENV_KEY)
    return konnect_token(key, konnect_id) if key else None
