"""Passwords (argon2id), access tokens (JWT with expiry), secrets at rest (Fernet)."""

from __future__ import annotations

import base64
import functools
import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from cryptography.fernet import Fernet

_hasher = PasswordHasher()  # argon2id with the library's recommended parameters
JWT_ALGORITHM = "HS256"


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def create_access_token(*, user_id: int, secret: str, lifetime: timedelta, session_version: int = 0) -> str:
    """A signed access token. ``session_version`` is the user's at sign-in: a password change or reset
    increments the user's, which ends this token whatever its issue time."""
    now = datetime.now(UTC)
    payload: dict[str, Any] = {
        "sub": str(user_id),
        "sv": session_version,
        "iat": now,
        "exp": now + lifetime,
        "typ": "access",
        "jti": secrets.token_hex(16),  # lets logout revoke this one token
    }
    return jwt.encode(payload, secret, algorithm=JWT_ALGORITHM)


class AccessClaims:
    """What a valid access token says: who, its id (for revocation), its session version, when issued
    and when it expires."""

    __slots__ = ("expires_at", "issued_at", "jti", "session_version", "user_id")

    def __init__(
        self,
        *,
        user_id: int,
        jti: str | None,
        issued_at: datetime | None,
        expires_at: datetime,
        session_version: int = 0,
    ) -> None:
        self.user_id = user_id
        self.jti = jti
        self.issued_at = issued_at
        self.expires_at = expires_at
        self.session_version = session_version


def _verify_access_claims(token: str, secret: str) -> AccessClaims | None:
    """The claims of a token whose signature and shape are right, expired or not (checked by the caller)."""
    try:
        payload = jwt.decode(
            token, secret, algorithms=[JWT_ALGORITHM], options={"require": ["exp", "sub"], "verify_exp": False}
        )
        user_id = int(payload["sub"])
        issued = datetime.fromtimestamp(int(payload["iat"]), UTC) if "iat" in payload else None
        expires = datetime.fromtimestamp(int(payload["exp"]), UTC)
        version = payload.get("sv", 0)
        if not isinstance(version, int) or isinstance(version, bool):
            return None
    except (jwt.PyJWTError, TypeError, ValueError, OverflowError, OSError):
        return None
    if payload.get("typ") != "access":
        return None
    jti = payload.get("jti")
    return AccessClaims(
        user_id=user_id,
        jti=jti if isinstance(jti, str) else None,
        issued_at=issued,
        expires_at=expires,
        session_version=version,
    )


# A signature check gives the same answer for the same token and key every time, so the verified claims
# of recent tokens are kept (a signed-in page calls several routes with one token). Only the
# signature's work is saved: expiry is checked on every call, revocation in the database as before.
# Bounded in entries and in token length, so junk tokens cannot grow it.
_verified_claims = functools.lru_cache(maxsize=8192)(_verify_access_claims)
CACHED_TOKEN_MAX_CHARS = 1024


def decode_access_claims(token: str, *, secret: str) -> AccessClaims | None:
    verify = _verified_claims if len(token) <= CACHED_TOKEN_MAX_CHARS else _verify_access_claims
    claims = verify(token, secret)
    if claims is None or claims.expires_at <= datetime.now(UTC):
        return None
    return claims


def decode_access_token(token: str, *, secret: str) -> int | None:
    try:
        payload = jwt.decode(token, secret, algorithms=[JWT_ALGORITHM], options={"require": ["exp", "sub"]})
    except jwt.PyJWTError:
        return None
    if payload.get("typ") != "access":
        return None
    try:
        return int(payload["sub"])
    except (TypeError, ValueError):
        return None


def new_token(nbytes: int = 32) -> str:
    """An unguessable URL-safe token (webhooks, email verification)."""
    return secrets.token_urlsafe(nbytes)


def token_digest(token: str) -> str:
    """What we store for one-time tokens: a leaked database does not leak usable links."""
    return hashlib.sha256(token.encode()).hexdigest()


class SecretBox:
    """Encrypts app credentials at rest with a key derived from KONNECTZ_ENCRYPTION_KEY."""

    def __init__(self, key_material: str) -> None:
        key = base64.urlsafe_b64encode(hashlib.sha256(key_material.encode()).digest())
        self._fernet = Fernet(key)

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        return self._fernet.decrypt(token.encode()).decode()
