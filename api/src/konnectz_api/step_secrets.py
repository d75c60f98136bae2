"""Secrets typed into steps: header and query-parameter values of the API Call add-on marked secret.

- **Which names are secret by default** (the editor turns the row's lock on for them; the user may
  turn it off or on for any row): :data:`SECRET_NAMES` (whole names) and :data:`SECRET_NAME_PARTS`
  (parts of a name), case-insensitive, in :func:`is_default_secret`. This module is the one list:
  the OpenAPI document carries it as the ``SecretNames`` schema (``GET /api/v1/konnects/secret_names``),
  so ``web/src/api/schema.d.ts`` has it and ``web/src/editor/model/secrets.ts`` fails ``tsc`` when it
  differs.
- **At rest** (:func:`seal_canvas`, on every write of a canvas): a secret row's value is encrypted
  with the app-credential cipher (:class:`konnectz_api.core.crypto.CredentialCipher`, Fernet with
  a key id, ``KONNECTZ_ENCRYPTION_KEY``) as ``{"v": value, "k": konnect id, "o": origin}`` and
  stored as ``"sealed"``; the row's ``value`` is stored empty. A row sent back with the
  :data:`MASK` as its value keeps the secret stored for the same node, list and key.
- **On every read** (:func:`mask_canvas`): ``sealed`` is dropped and the value is the fixed
  :data:`MASK`, for everyone, the author too: a secret can be replaced, never read back.
- **At run time**: the compiled step carries ``sealed``; only the runner (through the api's broker,
  ``/api/v1/internal/step_secrets``, opening values sealed for that konnect only) and Test & Review
  (:func:`opener`) see the plain value, and send it only to the origin it was typed for.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Literal, get_args

from konnectz_api.core.crypto import CredentialCipher, DecryptionError
from konnectz_contracts.errors import StepError
from konnectz_runner import origin_of

__all__ = [
    "MASK",
    "SECRET_LISTS",
    "SECRET_NAMES",
    "SECRET_NAME_PARTS",
    "SealedError",
    "SecretName",
    "SecretNamePart",
    "is_default_secret",
    "mask_canvas",
    "open_sealed",
    "opener",
    "seal_canvas",
]

#: What every reply shows in place of a secret value (fixed: nothing of the value shows).
MASK: Literal["••••••"] = "••••••"
#: Header and parameter names that are secret by default (compared in lower case).
SecretName = Literal[
    "authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "set-cookie", "x-auth-token"
]
#: A name containing one of these (in lower case) is secret by default.
SecretNamePart = Literal["token", "secret", "password", "apikey", "api-key"]
SECRET_NAMES: tuple[str, ...] = get_args(SecretName)
SECRET_NAME_PARTS: tuple[str, ...] = get_args(SecretNamePart)
#: The lists of an API Call node whose rows may be secret.
SECRET_LISTS = ("headers", "params")


class SealedError(ValueError):
    """A sealed value that cannot be opened, or was sealed for another konnect."""


def is_default_secret(name: str) -> bool:
    lowered = name.strip().lower()
    return lowered in SECRET_NAMES or any(part in lowered for part in SECRET_NAME_PARTS)


def _rows(canvas: Any) -> Iterator[tuple[str, str, int, dict[str, Any], str]]:
    """(node id, list name, index, row, endpoint URL) of every header and param row of API Call nodes."""
    apps = canvas.get("apps") if isinstance(canvas, dict) else None
    for node in apps if isinstance(apps, list) else ():
        data = node.get("data") if isinstance(node, dict) else None
        selected = data.get("selectedValue") if isinstance(data, dict) else None
        details = selected.get("apiDetails") if isinstance(selected, dict) else None
        if not isinstance(details, dict):
            continue
        url = details.get("endpointURL")
        for name in SECRET_LISTS:
            rows = details.get(name)
            for index, row in enumerate(rows if isinstance(rows, list) else ()):
                if isinstance(row, dict):
                    yield str(node.get("id")), name, index, row, url if isinstance(url, str) else ""


def _is_secret(row: dict[str, Any]) -> bool:
    return row.get("secret") is True


def seal_canvas(
    canvas: dict[str, Any], stored: dict[str, Any] | None, *, cipher: CredentialCipher, konnect_id: int
) -> dict[str, Any]:
    """The canvas to store: each secret row's typed value encrypted, a masked one kept from ``stored``.

    A ``sealed`` sent by the client is never trusted (dropped); only the stored canvas of this
    konnect provides one, for the same node, list and key (else the same position)."""
    out = copy.deepcopy(canvas)
    kept: dict[tuple[str, str], list[tuple[int, str, str]]] = {}
    for node_id, name, index, row, _url in _rows(stored):
        sealed = row.get("sealed")
        if _is_secret(row) and isinstance(sealed, str) and sealed:
            kept.setdefault((node_id, name), []).append((index, str(row.get("key") or "").strip().lower(), sealed))
    for node_id, name, index, row, url in _rows(out):
        row.pop("sealed", None)
        if not _is_secret(row):
            continue
        value = row.get("value")
        row["value"] = ""
        if value == MASK:
            candidates = kept.get((node_id, name), [])
            key = str(row.get("key") or "").strip().lower()
            match = next((s for _, k, s in candidates if k == key), None)
            match = match or next((s for i, _, s in candidates if i == index), None)
            if match is not None:
                row["sealed"] = match
        elif isinstance(value, str) and value:
            row["sealed"] = cipher.encrypt({"v": value, "k": konnect_id, "o": origin_of(url)})
    return out


def mask_canvas(canvas: Any) -> Any:
    """The canvas as replies show it: no ``sealed``, secret values replaced by :data:`MASK`."""
    if not isinstance(canvas, dict):
        return canvas
    out = copy.deepcopy(canvas)
    for _node, _name, _index, row, _url in _rows(out):
        sealed = row.pop("sealed", None)
        if _is_secret(row):
            row["value"] = MASK if sealed else ""
    return out


def open_sealed(sealed: str, *, cipher: CredentialCipher, konnect_id: int) -> tuple[str, str | None]:
    """The plain value and the origin it was typed for; only for the konnect it was sealed for."""
    try:
        payload = cipher.decrypt(sealed)
    except DecryptionError as exc:
        raise SealedError("a secret value cannot be decrypted") from exc
    value, owner, origin = payload.get("v"), payload.get("k"), payload.get("o")
    if owner != konnect_id or not isinstance(value, str):
        raise SealedError("a secret value was not typed into this konnect")
    return value, origin if isinstance(origin, str) else None


def opener(
    cipher: CredentialCipher, konnect_id: int
) -> Callable[[int, list[str]], Awaitable[list[tuple[str, str | None]]]]:
    """A :attr:`konnectz_runner.model.StepContext.open_secrets` for Test & Review in the api."""

    async def open_all(_konnect_id: int, sealed: list[str]) -> list[tuple[str, str | None]]:
        try:
            return [open_sealed(s, cipher=cipher, konnect_id=konnect_id) for s in sealed]
        except SealedError as exc:
            raise StepError(f"The step's secret values could not be read: {exc}") from exc

    return open_all
