"""Widgets (``routes/widgets.py``)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class WidgetOut(BaseModel):
    id: str
    name: str
    url: str = Field(description="The frame URL on the AI host, with authToken appended")


class WidgetDetails(BaseModel):
    """One AI frame. Without an AI host ``configured`` is false and ``url`` null (a 200, not an error:
    the page then says how to start one)."""

    id: str
    name: str
    configured: bool = Field(description="False when no AI host is configured (KONNECTZ_AI_HOST_URL unset)")
    url: str | None = Field(description="The frame URL on the AI host, with authToken appended; null if not configured")
    message: str | None = Field(default=None, description="Why there is no frame, when configured is false")


class WidgetList(BaseModel):
    widgets: list[WidgetOut]
    ai_host_configured: bool
