"""Revisions of a flow (``routes/revisions.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from konnectz_api.schemas.konnects import RevisionMessage


class RevisionItem(BaseModel):
    number: int = Field(description="1, 2, 3... per flow")
    message: str = Field(description="What the publisher said changed (may be empty)")
    published_by: int | None = Field(default=None, description="Id of the user who published it")
    published_by_email: str = Field(description="E-mail of the user who published it")
    created_at: datetime
    restored_from: int | None = Field(default=None, description="The revision this one restored, if a restore")
    live: bool = Field(description="true: this revision is the one running")


class RevisionList(BaseModel):
    revisions: list[RevisionItem]
    total: int
    live_revision: int | None = Field(description="The revision running now (null: the flow is not live)")


class RevisionDetail(RevisionItem):
    canvas_json: dict[str, Any] = Field(description="The editor document published (secret values masked)")
    spec: dict[str, Any] = Field(description="The compiled flow spec published (without the webhook token)")


class RestoreIn(BaseModel):
    message: RevisionMessage = Field(
        default=None, description="Kept with the new revision; default: 'Restored revision N'"
    )
