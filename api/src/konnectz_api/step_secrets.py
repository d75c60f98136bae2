"""Secrets typed into steps: header and query-parameter values of the API Call add-on marked secret.

- **Which rows are secret**: a row the user marks ``secret: true`` (the lock in the editor), and,
  whatever the client sends, every row whose name is on the default list: :data:`SECRET_NAMES`
  (whole names) and :data:`SECRET_NAME_PARTS` (parts of a name), case-insensitive, in
  :func:`is_default_secret`. A listed name is always secret on the server (:func:`is_secret`): a
  row sent with ``secret: false`` is stored and served as ``secret: true``, and the reply of the
  write names it (:func:`sealed_by_name`, ``sealed_by_name`` in the save, publish, Test & Review and
  delete_activity replies). The lock in the editor only adds names; it cannot take a listed one off.
  This module is the one list: the OpenAPI document carries it as the ``SecretNames`` schema
  (``GET /api/v1/konnects/secret_names``), so ``web/src/api/schema.d.ts`` has it and
  ``web/src/editor/model/secrets.ts`` fails ``tsc`` when it differs.
- **At rest** (:func:`seal_canvas`, on every write of a canvas: save and publish, Test & Review,
  delete_activity): a secret row's value is encrypted with the app-credential cipher
  (:class:`konnectz_api.core.crypto.CredentialCipher`, Fernet with a key id,
  ``KONNECTZ_ENCRYPTION_KEY``) as ``{"v": value, "k": konnect id, "o": origin}`` and stored as
  ``"sealed"``; the row's ``value`` is stored empty and its ``secret`` true. A row sent back with the
  :data:`MASK` as its value keeps the secret stored for the same node, list and key (a listed row
  stored in plain text before this rule, or by a cluster import, is sealed then).
- **On every read** (:func:`mask_canvas`): ``sealed`` is dropped and the value is the fixed
  :data:`MASK`, for everyone, the author too: a secret can be replaced, never read back. A listed
  row reads as ``secret: true`` even when it was stored otherwise.
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
from konnectz_runner.apps import origin_of

__all__ = [
    "MASK",
    "SECRET_LISTS",
    "SECRET_NAMES",
    "SECRET_NAME_PARTS",
    "SealedError",
    "SecretName",
    "SecretNamePart",
    "is_default_secret",
    "is_secret",
    "mask_canvas",
    "open_sealed",
    "opener",
    "seal_canvas",
    "sealed_by_name",
]

#: What every reply shows in place of a secret value (fixed: nothing of the value shows).
MASK: Literal["••••••"] = "••••••"
#: Header and parameter names that are secret by default (compared in lower case).
SecretName = Literal[
    "authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "set-cookie", "x-auth-token"
]
#: A name containing one of these (in lower case) is secret by default.
SecretNamePart = Literal["token", "secret", "password", "apikey", "api-key", "api_key"]
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


def is_secret(row: dict[str, Any]) -> bool:
    """A row whose value is secret: marked ``secret: true``, or named on the default list (always)."""
    key = row.get("key")
    return row.get("secret") is True or (isinstance(key, str) and is_default_secret(key))


def _key(row: dict[str, Any]) -> str:
    return str(row.get("key") or "").strip().lower()


def _plain(row: dict[str, Any]) -> str | None:
    """The plain value of a listed row stored before names were always secret (or imported from the
    cluster): a row not marked secret with a value that is not the mask."""
    value = row.get("value")
    if row.get("secret") is True or not isinstance(value, str) or not value or value == MASK:
        return None
    return value


def sealed_by_name(canvas: Any) -> list[str]:
    """The rows of ``canvas`` (as a client sent it) that are secret by name only: on the default list
    but not sent as ``secret: true``. Each as ``"<node id> <list> <name>"``, e.g.
    ``"node-2 headers Authorization"``; the replies of writes carry them as ``sealed_by_name``."""
    return [
        f"{node_id} {name} {str(row.get('key')).strip()}"
        for node_id, name, _index, row, _url in _rows(canvas)
        if row.get("secret") is not True and is_secret(row)
    ]


def seal_canvas(
    canvas: dict[str, Any], stored: dict[str, Any] | None, *, cipher: CredentialCipher, konnect_id: int
) -> dict[str, Any]:
    """The canvas to store: each secret row (:func:`is_secret`: a listed name whatever the client
    sent) marked ``secret: true`` and its typed value encrypted, a masked one kept from ``stored``.

    A ``sealed`` sent by the client is never trusted (dropped); only the stored canvas of this
    konnect provides one, for the same node, list and key (else the same position). A listed row
    stored in plain text is sealed when the mask is sent back for it."""
    out = copy.deepcopy(canvas)
    # (node id, list) -> [(index, key, stored envelope or the payload of a listed row stored in plain text)]
    kept: dict[tuple[str, str], list[tuple[int, str, str | dict[str, Any]]]] = {}
    for node_id, name, index, row, url in _rows(stored):
        if not is_secret(row):
            continue
        sealed, plain = row.get("sealed"), _plain(row)
        if isinstance(sealed, str) and sealed:
            kept.setdefault((node_id, name), []).append((index, _key(row), sealed))
        elif plain is not None:
            payload = {"v": plain, "k": konnect_id, "o": origin_of(url)}
            kept.setdefault((node_id, name), []).append((index, _key(row), payload))
    for node_id, name, index, row, url in _rows(out):
        row.pop("sealed", None)
        if not is_secret(row):
            continue
        row["secret"] = True
        value = row.get("value")
        row["value"] = ""
        if value == MASK:
            candidates = kept.get((node_id, name), [])
            key = _key(row)
            match = next((s for _, k, s in candidates if k == key), None)
            match = match or next((s for i, _, s in candidates if i == index), None)
            if match is not None:
                row["sealed"] = match if isinstance(match, str) else cipher.encrypt(match)
        elif isinstance(value, str) and value:
            row["sealed"] = cipher.encrypt({"v": value, "k": konnect_id, "o": origin_of(url)})
    return out


def mask_canvas(canvas: Any) -> Any:
    """The canvas as replies show it: no ``sealed``, secret rows (:func:`is_secret`) as ``secret:
    true`` with the value :data:`MASK` when one is stored (``""`` when none)."""
    if not isinstance(canvas, dict):
        return canvas
    out = copy.deepcopy(canvas)
    for _node, _name, _index, row, _url in _rows(out):
        sealed = row.pop("sealed", None)
        if is_secret(row):
            stored = bool(sealed) or _plain(row) is not None
            row["secret"] = True
            row["value"] = MASK if stored else ""
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
    """A :attr:`konnectz_runner.engine.context.StepContext.open_secrets` for Test & Review in the api."""

    async def open_all(_konnect_id: int, sealed: list[str]) -> list[tuple[str, str | None]]:
        try:
            return [open_sealed(s, cipher=cipher, konnect_id=konnect_id) for s in sealed]
        except SealedError as exc:
            raise StepError(f"The step's secret values could not be read: {exc}") from exc

    return open_all
