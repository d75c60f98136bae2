"""What a Konnect needs before it runs: its ids (the api's import) and its URL token.

The spec holds neither the konnect's ids until the api has imported it (``spec.konnectId`` /
``spec.ownerId``) nor the token of a webhook or form trigger, which sits in the Secret
``spec.trigger.tokenSecret`` names (written by the api, owned by the Konnect). The operator reads
that Secret by name (it may get Secrets, never list or watch them); the token goes to the runner
as a ``secretKeyRef`` and to the shared pool through NATS, never into a ConfigMap or the spec.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from konnectz_contracts.resource import TOKEN_KEY

from .apply import Kube
from .errors import OperatorError

__all__ = ["NotImported", "Resolved", "TokenMissing", "imported", "resolve"]


class NotImported(OperatorError):
    """The Konnect has no konnectId/ownerId yet: the api has not imported it (owner annotation)."""


class TokenMissing(OperatorError):
    """The trigger's token Secret is not there (yet): the api writes it right after the Konnect."""


@dataclass(frozen=True)
class Resolved:
    konnect: Mapping[str, Any]  # the Konnect, imported (it has its ids)
    token: str | None  # the URL token of a webhook or form trigger


def imported(konnect: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Konnect when the api has imported it (it has ``konnectId`` and ``ownerId``)."""
    spec = konnect.get("spec") or {}
    if spec.get("konnectId") is None or spec.get("ownerId") is None:
        raise NotImported(
            "waiting for the api to import this Konnect: name its owner (a Konnectz user's e-mail) in the "
            "annotation konnectz.io/owner, in a namespace an administrator bound to the owner's account"
        )
    return konnect


def _token(kube: Kube, konnect: Mapping[str, Any]) -> str | None:
    spec = konnect.get("spec") or {}
    trigger = spec.get("trigger") or {}
    if trigger.get("kind") not in ("webhook", "form"):
        return None
    secret_name = trigger.get("tokenSecret")
    namespace = (konnect.get("metadata") or {}).get("namespace") or "default"
    if not secret_name:
        raise TokenMissing("spec.trigger.tokenSecret (the Secret holding the URL token) is not set yet")
    secret = kube.get("v1", "Secret", namespace, str(secret_name))
    data = (secret or {}).get("data") or {}
    if TOKEN_KEY not in data:
        raise TokenMissing(f"waiting for the Secret {secret_name} (key {TOKEN_KEY}) holding the URL token")
    # The api writes the Secret owned by the Konnect it belongs to: a Konnect naming another one's
    # Secret never gets that flow's URL token. Not permanent: after a re-publish the api applies the
    # Secret with the new Konnect as its owner a moment after the Konnect.
    uid = (konnect.get("metadata") or {}).get("uid")
    owners = [ref.get("uid") for ref in ((secret or {}).get("metadata") or {}).get("ownerReferences") or []]
    if uid and uid not in owners:
        raise TokenMissing(
            f"waiting for the Secret {secret_name} owned by this Konnect: the Secret of another Konnect's "
            "URL token is never used"
        )
    return base64.b64decode(data[TOKEN_KEY]).decode()


def resolve(kube: Kube, konnect: Mapping[str, Any]) -> Resolved:
    """The Konnect as it runs; :class:`NotImported` or :class:`TokenMissing` when it cannot run yet."""
    return Resolved(konnect=imported(konnect), token=_token(kube, konnect))
