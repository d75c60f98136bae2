"""The token a runner shows the api's credential broker: it opens the accounts of one konnect only.

``konnect_token(key, K, uid)`` is an HMAC of the konnect id K and the Kubernetes UID of its Konnect
resource under the *credentials key*, a secret shared by the api (which checks it) and whoever
starts runners:

- a runner of one konnect (a Kubernetes Deployment or CronJob) gets the token itself, in
  ``KONNECTZ_CREDENTIALS_TOKEN`` from a Secret the operator renders with the ``metadata.uid`` of the
  Konnect it renders; it never sees the key;
- a runner hosting many konnects (``make dev``, the shared pool) gets the key in
  ``KONNECTZ_CREDENTIALS_KEY`` and derives each konnect's token. ``make dev`` has no resource
  (``uid`` is the empty string on both sides); the shared pool learns each flow's UID from the
  operator, which hands it over with the flow (``FlowSpec.resource_uid``, :func:`remember_resource_uid`).

The api computes the token it expects from the UID it recorded for the flow (the Konnect it created
or imported): a token minted for a copy of the resource (another UID), or for another konnect, is
refused. The key is not the api's signing key: a runner that holds it can read flow credentials
but cannot mint sign-in tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping

__all__ = [
    "ENV_KEY",
    "ENV_TOKEN",
    "ENV_URL",
    "derived_key",
    "forget_resource_uid",
    "konnect_token",
    "remember_resource_uid",
    "resource_binding",
    "token_for",
]

ENV_URL = "KONNECTZ_CREDENTIALS_URL"
ENV_TOKEN = "KONNECTZ_CREDENTIALS_TOKEN"  # noqa: S105 - the name of a variable
ENV_KEY = "KONNECTZ_CREDENTIALS_KEY"

# konnect id -> UID of its Konnect resource, for a runner that derives tokens from the key (the
# shared pool: its KV watcher fills it from each flow the operator hands over).
_RESOURCE_UIDS: dict[int, str] = {}


def konnect_token(key: str, konnect_id: int, uid: str) -> str:
    """The broker token of konnect ``konnect_id`` served from the Konnect resource ``uid`` ("" when
    there is no resource: the local deployer)."""
    message = f"konnect-credentials:{int(konnect_id)}:{uid}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


def resource_binding(key: str, konnect_id: int, uid: str) -> str:
    """The proof that the api bound the Konnect resource ``uid`` to flow ``konnect_id`` (annotation
    ``konnectz.io/binding``, written by the api on the resource it created or imported). The operator
    renders only Konnects that carry it: a copy naming another flow's ids gets nothing to run."""
    message = f"konnect-resource:{int(konnect_id)}:{uid}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


def derived_key(secret_key: str) -> str:
    """The credentials key used when none is configured: one-way from the api's secret key."""
    return hmac.new(secret_key.encode(), b"konnectz credentials key", hashlib.sha256).hexdigest()


def remember_resource_uid(konnect_id: int, uid: str) -> None:
    """The UID of the Konnect resource konnect ``konnect_id`` is served from in this process."""
    if uid:
        _RESOURCE_UIDS[int(konnect_id)] = uid
    else:
        _RESOURCE_UIDS.pop(int(konnect_id), None)


def forget_resource_uid(konnect_id: int) -> None:
    _RESOURCE_UIDS.pop(int(konnect_id), None)


def token_for(konnect_id: int, env: Mapping[str, str] | None = None, *, uid: str | None = None) -> str | None:
    """This runner's token for ``konnect_id``, or None when it was given neither a token nor the key.

    With the key, the token is bound to ``uid`` (default: the UID remembered for the konnect, else "")."""
    env = os.environ if env is None else env
    if env.get(ENV_TOKEN):
        return env[ENV_TOKEN]
    key = env.get(ENV_KEY)
    if not key:
        return None
    return konnect_token(key, konnect_id, _RESOURCE_UIDS.get(int(konnect_id), "") if uid is None else uid)
