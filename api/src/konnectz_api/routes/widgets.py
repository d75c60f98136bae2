"""Widgets: the AI host's frames (Chatflows, Agentflows, Tools, AI), see konnectz_api.services.widgets."""

from __future__ import annotations

from fastapi import APIRouter

from konnectz_api.deps import SettingsDep, SignedInUser
from konnectz_api.errors import NotFound
from konnectz_api.schemas import WidgetDetails, WidgetList, WidgetOut
from konnectz_api.services import widgets as ai

router = APIRouter(prefix="/api/v1/widgets", tags=["widgets"])
NOT_CONFIGURED = "No AI host is configured for this Konnectz installation."


@router.get(
    "/active",
    response_model=WidgetList,
    summary="The AI frames available",
    description="Empty with ai_host_configured false when KONNECTZ_AI_HOST_URL is not set.",
)
def active(user: SignedInUser, settings: SettingsDep) -> WidgetList:
    if not settings.ai_host_url:
        return WidgetList(widgets=[], ai_host_configured=False)
    token = ai.ai_token(settings, user)
    items = [WidgetOut(id=w.id, name=w.name, url=ai.frame_url(settings, w, token)) for w in ai.widgets(settings)]
    return WidgetList(widgets=items, ai_host_configured=True)


@router.get(
    "/details/{widget_id}",
    response_model=WidgetDetails,
    summary="One AI frame: chatflows, agentflows, tools or ai",
    description="Without an AI host (KONNECTZ_AI_HOST_URL unset) a 200 with configured false, url null and a "
    "message: the pages say how to start one (`make dev AI=flowise`).",
    responses={404: {"description": "Unknown widget"}},
)
def details(widget_id: str, user: SignedInUser, settings: SettingsDep) -> WidgetDetails:
    widget = next((w for w in ai.widgets(settings) if w.id == widget_id), None)
    if widget is None:
        raise NotFound("No such widget")
    if not settings.ai_host_url:
        return WidgetDetails(id=widget.id, name=widget.name, configured=False, url=None, message=NOT_CONFIGURED)
    url = ai.frame_url(settings, widget, ai.ai_token(settings, user))
    return WidgetDetails(id=widget.id, name=widget.name, configured=True, url=url)
