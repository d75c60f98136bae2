"""Folders of flows (``routes/folders.py``)."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from konnectz_api.schemas.common import ReplyStatus


class FolderNameIn(BaseModel):
    folder_name: str = Field(min_length=1, max_length=100, description="1 to 100 characters, trimmed")

    @field_validator("folder_name")
    @classmethod
    def _clean(cls, value: str) -> str:
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise ValueError("must not contain control characters")
        value = value.strip()
        if not value:
            raise ValueError("must not be blank")
        return value


class FolderOut(BaseModel):
    id: int
    name: str
    konnect_count: int = Field(description="Flows in the folder (deleted flows not counted)")


class FolderList(BaseModel):
    status: ReplyStatus = "SUCCESS"
    message: str = "SUCCESS"
    folders: list[FolderOut]


class FolderReply(BaseModel):
    status: ReplyStatus
    message: str
    folder: FolderOut | None = None


class AssignIn(BaseModel):
    konnects: str = Field(
        min_length=1,
        max_length=20_000,
        pattern=r"^\s*\d{1,19}\s*(,\s*\d{1,19}\s*)*$",
        description="Comma-separated konnect ids, e.g. `12,15,19` (at most 1000)",
        examples=["12,15,19"],
    )


class AssignOut(BaseModel):
    status: ReplyStatus
    message: str
    folder_id: int
    konnects: list[int] = Field(description="The ids now in the folder")


class FolderRemoveOut(BaseModel):
    status: ReplyStatus
    message: str
    folder_id: int
    konnects_moved_home: int = Field(description="How many flows of the folder returned to Home")
