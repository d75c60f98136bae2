"""Serves avatars at the unguessable image_url a profile carries (no sign-in: <img> tags send no token)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from konnectz_api.crud import avatars
from konnectz_api.deps import SessionDep
from konnectz_api.errors import NotFound

router = APIRouter(prefix="/api/v1/avatars", tags=["profile"])


@router.get(
    "/{name}",
    response_class=Response,
    summary="An avatar image (PNG)",
    responses={200: {"content": {"image/png": {}}}, 404: {"description": "No such avatar"}},
)
def avatar(name: str, session: SessionDep) -> Response:
    token = name.removesuffix(".png")
    content = avatars.find(session, token=token) if name.endswith(".png") else None
    if content is None:
        raise NotFound("No such avatar")
    return Response(
        content,
        media_type="image/png",
        headers={
            "Cache-Control": "public, max-age=31536000, immutable",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'",
        },
    )
