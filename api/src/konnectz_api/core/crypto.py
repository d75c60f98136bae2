"""App credentials at rest: Fernet (AES-128-CBC + HMAC-SHA256) with a key id, so keys can rotate.

Each stored value is ``<key id>:<Fernet token>``. The key id is the first 12 hex digits of the
SHA-256 of the key material; the Fernet key is derived from the material with HKDF-SHA256.
``KONNECTZ_ENCRYPTION_KEY`` encrypts; ``KONNECTZ_OLD_ENCRYPTION_KEYS`` (comma-separated) are still
read, and :meth:`CredentialCipher.needs_rotation` tells which values to re-encrypt.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["CredentialCipher", "DecryptionError", "key_id"]


class DecryptionError(ValueError):
    """A stored credential cannot be read with any configured key."""


def key_id(material: str) -> str:
    return hashlib.sha256(material.encode()).hexdigest()[:12]


def _fernet(material: str) -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"konnectz-credentials", info=b"fernet-v1").derive(
        material.encode()
    )
    return Fernet(base64.urlsafe_b64encode(derived))


class CredentialCipher:
    def __init__(self, current: str, old: list[str] | tuple[str, ...] = ()) -> None:
        self.current_id = key_id(current)
        self._keys = {key_id(m): _fernet(m) for m in (*old, current) if m}

    def encrypt(self, credentials: dict[str, Any]) -> str:
        token = self._keys[self.current_id].encrypt(json.dumps(credentials, separators=(",", ":")).encode())
        return f"{self.current_id}:{token.decode()}"

    def decrypt(self, stored: str) -> dict[str, Any]:
        kid, _, token = stored.partition(":")
        fernet = self._keys.get(kid)
        if fernet is None:
            raise DecryptionError(f"no configured key has id {kid}")
        try:
            value = json.loads(fernet.decrypt(token.encode()))
        except (InvalidToken, ValueError) as exc:
            raise DecryptionError("credentials cannot be decrypted") from exc
        if not isinstance(value, dict):
            raise DecryptionError("credentials are not an object")
        return value

    def needs_rotation(self, stored: str) -> bool:
        return not stored.startswith(self.current_id + ":")

    @classmethod
    def from_settings(cls, encryption_key: str, old_encryption_keys: str) -> CredentialCipher:
        return cls(encryption_key, [k.strip() for k in old_encryption_keys.split(",") if k.strip()])
