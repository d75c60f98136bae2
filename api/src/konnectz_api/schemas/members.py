"""Team members, sub-accounts and the audit log (``routes/members.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, EmailStr, Field, field_validator

AccessLevel = Literal["Create", "Create/Delete", "FULL"]


class _MemberFields(BaseModel):
    model_config = ConfigDict(extra="ignore")

    first_name: str | None = Field(default=None, min_length=1, max_length=100)
    last_name: str | None = Field(default=None, max_length=100)
    name: str | None = Field(default=None, max_length=201, description="Full name; used when first_name is missing")

    @field_validator("first_name", "last_name", "name")
    @classmethod
    def _no_control_characters(cls, value: str | None) -> str | None:
        if value is not None and any(ord(ch) < 32 for ch in value):
            raise ValueError("must not contain control characters")
        return value

    def names(self) -> tuple[str | None, str | None]:
        if self.first_name is None and self.name and self.name.strip():
            first, _, last = self.name.strip().partition(" ")
            return first[:100], (self.last_name if self.last_name is not None else last[:100])
        return self.first_name, self.last_name


class TeamMemberIn(_MemberFields):
    email: EmailStr
    access: AccessLevel


class TeamMemberUpdate(_MemberFields):
    sub_account_id: int = Field(ge=1, lt=2**63)
    access: AccessLevel | None = None


class SubAccountIn(_MemberFields):
    email: EmailStr
    task: int = Field(ge=0, le=10**9, description="The sub-account's own task quota")


class SubAccountUpdate(_MemberFields):
    sub_account_id: int = Field(ge=1, lt=2**63)
    task: int | None = Field(default=None, ge=0, le=10**9)


class MemberOut(BaseModel):
    id: int
    name: str
    first_name: str
    last_name: str
    email: str
    access: AccessLevel | None = Field(default=None, description="Team members only")
    task: int | None = Field(default=None, description="Sub-accounts only: their task quota")
    task_consumed: int | None = None
    remaining: int | None = Field(default=None, description="task - task_consumed")


class TeamList(BaseModel):
    team_users: list[MemberOut]
    total: int
    allowed_limit: int


class AgencyList(BaseModel):
    total_tasks: int
    task_consumed: int
    total_subaccounts: int
    allowed_subaccount_limit: int
    sub_accounts: list[MemberOut]


class ResellerList(BaseModel):
    reseller_users: list[MemberOut]
    total: int


class MemberReply(BaseModel):
    message: str
    member: MemberOut | None = None


class AuditEntryOut(BaseModel):
    id: int
    actor_email: str
    action: str
    outcome: str
    address: str | None
    created_at: datetime


class AuditLogOut(BaseModel):
    entries: list[AuditEntryOut]
    total: int
