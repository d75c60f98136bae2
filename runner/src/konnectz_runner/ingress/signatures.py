"""Verifying the signature of an app's webhook delivery (manifest :class:`~konnectz_contracts.manifest.Signature`).

- ``scheme: hmac`` (GitHub ``X-Hub-Signature-256: sha256=<hex>``, Typeform, Slack with a timestamped
  payload): the header is ``prefix`` + HMAC(secret, ``signed_payload``) in hex or base64; with
  ``timestamp_header`` the delivery must be at most ``tolerance_seconds`` old.
- ``scheme: stripe`` (``Stripe-Signature: t=<unix>,v1=<hex>,v1=...``): HMAC-SHA256 of
  ``<t>.<body>``; any ``v1`` may match (Stripe sends one per active secret while rolling them);
  ``t`` at most ``tolerance_seconds`` from now.

``signed_payload`` is a template: ``{{body}}`` is the raw body, ``{{headers.<name>}}`` a header
(lower-case name). Digests are compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping

from konnectz_contracts.manifest import Signature

__all__ = ["sign", "verify_signature"]

_HEADER_REF = re.compile(r"\{\{\s*headers\.([A-Za-z0-9_-]+)\s*\}\}")
_BODY_REF = re.compile(r"\{\{\s*body\s*\}\}")


def _payload(signature: Signature, headers: Mapping[str, str], body: bytes) -> bytes:
    """``signed_payload`` with the headers filled in and the raw body in place of ``{{body}}``."""
    lowered = {k.lower(): v for k, v in headers.items()}
    parts = _BODY_REF.split(signature.signed_payload)
    texts = [_HEADER_REF.sub(lambda m: lowered.get(m.group(1).lower(), ""), part) for part in parts]
    return body.join(t.encode() for t in texts)


def _digest(signature: Signature, secret: str, payload: bytes) -> str:
    algorithm = hashlib.sha1 if signature.algorithm == "hmac-sha1" else hashlib.sha256
    mac = hmac.new(secret.encode(), payload, algorithm).digest()
    return base64.b64encode(mac).decode() if signature.encoding == "base64" else mac.hex()


def sign(signature: Signature, secret: str, body: bytes, *, headers: Mapping[str, str] | None = None,
         timestamp: int | None = None) -> str:  # fmt: skip
    """The header value an app would send (tests and fakes of apps use it)."""
    if signature.scheme == "stripe":
        t = int(timestamp or 0)
        return f"t={t},v1={_digest(signature, secret, str(t).encode() + b'.' + body)}"
    return signature.prefix + _digest(signature, secret, _payload(signature, headers or {}, body))


def verify_signature(signature: Signature, secret: str, headers: Mapping[str, str], body: bytes, *, now: float) -> bool:
    """Whether ``headers`` carry a valid signature of ``body`` under ``secret``."""
    if not secret:
        return False
    lowered = {k.lower(): v for k, v in headers.items()}
    given = lowered.get(signature.header.lower(), "").strip()
    if not given:
        return False
    if signature.scheme == "stripe":
        fields = [part.partition("=") for part in given.split(",")]
        stamps = [v.strip() for k, _, v in fields if k.strip() == "t"]
        candidates = [v.strip() for k, _, v in fields if k.strip() == "v1"]
        if len(stamps) != 1 or not stamps[0].isdigit() or len(stamps[0]) > 12 or not candidates:
            return False
        if abs(now - int(stamps[0])) > signature.tolerance_seconds:
            return False
        expected = _digest(signature, secret, stamps[0].encode() + b"." + body)
        return any(hmac.compare_digest(expected.encode(), c.encode()) for c in candidates)
    if signature.timestamp_header:
        stamp = lowered.get(signature.timestamp_header.lower(), "").strip()
        if not stamp.isdigit() or len(stamp) > 12 or abs(now - int(stamp)) > signature.tolerance_seconds:
            return False
    expected = signature.prefix + _digest(signature, secret, _payload(signature, headers, body))
    return hmac.compare_digest(expected.encode(), given.encode())
