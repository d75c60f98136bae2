"""Avatars: an uploaded picture is checked by its content (Pillow decodes it; the file name and the declared
type are not trusted), shrunk to at most :data:`MAX_SIDE` pixels a side and re-encoded as PNG, which drops
EXIF, GPS and every other piece of metadata. The PNG is stored in PostgreSQL (api replicas share it) and
served without sign-in at ``/api/v1/avatars/{token}.png``; a new upload gets a new token, so the old URL
stops working and caches never show a stale picture.
"""

from __future__ import annotations

import io
import warnings

from PIL import Image, UnidentifiedImageError
from sqlalchemy import select
from sqlalchemy.orm import Session

from konnectz_api.core.security import new_token
from konnectz_api.models import Avatar, User, utcnow

ALLOWED_FORMATS = {"PNG", "JPEG", "GIF", "WEBP"}
MAX_SIDE = 512
MAX_PIXELS = 40_000_000  # refuse decompression bombs before decoding
PATH_PREFIX = "/api/v1/avatars/"


class InvalidImage(ValueError):
    pass


def reencode(data: bytes) -> bytes:
    """The picture as a clean PNG of at most MAX_SIDE x MAX_SIDE, or InvalidImage."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                if im.format not in ALLOWED_FORMATS:
                    raise InvalidImage("Upload a PNG, JPEG, GIF or WebP image.")
                if im.width * im.height > MAX_PIXELS:
                    raise InvalidImage("The image has too many pixels.")
                im.seek(0)  # the first frame of an animation
                im.load()
                picture = im.convert("RGBA")
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise InvalidImage("The file is not an image (PNG, JPEG, GIF or WebP).") from exc
    except (OSError, ValueError, SyntaxError) as exc:
        if isinstance(exc, InvalidImage):
            raise
        raise InvalidImage("The image could not be read.") from exc
    picture.thumbnail((MAX_SIDE, MAX_SIDE))
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)  # written fresh: no EXIF, no text chunks
    return out.getvalue()


def set_avatar(session: Session, *, user: User, png: bytes, public_url: str) -> User:
    """Store the re-encoded picture under a fresh token and point image_url (absolute, on ``public_url``)
    at it. Commits."""
    avatar = session.get(Avatar, user.id) or Avatar(user_id=user.id)
    avatar.token = new_token(24)
    avatar.content = png
    avatar.updated_at = utcnow()
    session.add(avatar)
    user.image_url = f"{public_url.rstrip('/')}{PATH_PREFIX}{avatar.token}.png"
    session.commit()
    return user


def remove_avatar(session: Session, *, user: User) -> User:
    avatar = session.get(Avatar, user.id)
    if avatar is not None:
        session.delete(avatar)
    user.image_url = None
    session.commit()
    return user


def find(session: Session, *, token: str) -> bytes | None:
    if not 0 < len(token) <= 64:
        return None
    return session.scalar(select(Avatar.content).where(Avatar.token == token))
