"""Request and reply schemas (the HTTP contract the SPA's types are generated from)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, EmailStr, Field, field_validator

PASSWORD_MIN = 8


class Message(BaseModel):
    message: str


class KeyReply(BaseModel):
    key: str
    message: str


# --- auth ---------------------------------------------------------------------------------
class EmailIn(BaseModel):
    email: EmailStr


class SignupIn(BaseModel):
    email: EmailStr
    first_name: str = Field(min_length=1, max_length=100)
    last_name: str = Field(default="", max_length=100)
    password: str = Field(min_length=PASSWORD_MIN, max_length=200)
    password_confirmation: str
    is_admin: bool = False


class EmailConfirmationIn(BaseModel):
    confirmation_token: str = Field(min_length=1, max_length=200)


class ResetPasswordIn(BaseModel):
    reset_password_token: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=PASSWORD_MIN, max_length=200)
    password_confirmation: str = Field(max_length=200)


class ProfileUpdate(BaseModel):
    """The fields a user may change. Everything else the SPA sends back (is_admin, current_plan,
    free_task, the payment customer id, preferred_language, image_url, email, id) is ignored."""

    model_config = ConfigDict(extra="ignore")

    first_name: str | None = Field(default=None, min_length=1, max_length=100)
    last_name: str | None = Field(default=None, max_length=100)
    country: str | None = Field(default=None, max_length=100, description="ISO 3166-1 alpha-2 code, e.g. DE")
    timezone: str | None = Field(default=None, max_length=64, description="IANA time zone, e.g. Europe/Berlin")

    @field_validator("first_name", "last_name", "country", "timezone")
    @classmethod
    def _no_control_characters(cls, value: str | None) -> str | None:
        if value is not None and any(ord(ch) < 32 for ch in value):
            raise ValueError("must not contain control characters")
        return value


class ChangePasswordIn(BaseModel):
    current_password: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=PASSWORD_MIN, max_length=200)
    password_confirmation: str = Field(max_length=200)


class CountryOption(BaseModel):
    value: str
    label: str


class TimezoneOption(BaseModel):
    value: str
    label: str
    offset_minutes: int


class ProfileOptions(BaseModel):
    countries: list[CountryOption]
    timezones: list[TimezoneOption]


class LoginIn(BaseModel):
    email: EmailStr
    password: str = Field(min_length=1, max_length=200)
    rememberMe: bool = False
    captcha: str | None = None


class LoginOut(BaseModel):
    auth_token: str
    preferred_language: str
    message: str


class Profile(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    email: str
    first_name: str
    last_name: str
    image_url: str | None
    current_plan: str
    country: str | None
    timezone: str | None
    preferred_language: str
    is_admin: bool


# --- apps ---------------------------------------------------------------------------------
class AppOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    image_url: str | None
    status: str
    account_count: int = 0
    provider: str
    app_type: str
    auth_type: str | None


class AppList(BaseModel):
    apps: list[AppOut]
    total_apps: int


# --- konnects -----------------------------------------------------------------------------
class CanvasJson(BaseModel):
    """The editor document. Only the top-level shape is checked here; publishing compiles it."""

    model_config = ConfigDict(extra="allow")

    apps: list[dict[str, Any]] = Field(max_length=500)
    links: list[dict[str, Any]] = Field(default_factory=list, max_length=1000)
    dataForSelect: dict[str, Any] | list[Any] = Field(default_factory=dict)
    flowName: str = Field(default="", max_length=255)


class SaveKonnectIn(BaseModel):
    konnect_id: int | None = None
    canvas_name: bool = False
    canvas_json: CanvasJson
    publish: bool = False


class SaveKonnectOut(BaseModel):
    status: Literal["SUCCESS"]
    message: str
    konnect_id: int
    konnect_status: str
    webhook_url: str


class RightApp(BaseModel):
    app_name: str


class LeftApp(BaseModel):
    name: str


class KonnectItem(BaseModel):
    id: int
    konnect_name: str
    status: str
    created_at: datetime
    success_task_count: int
    error_task_count: int
    left_app: LeftApp | None
    right_apps: list[RightApp]
    webhook_url: str


class KonnectList(BaseModel):
    konnects: list[KonnectItem]
    total_konnects: int


class KonnectEdit(BaseModel):
    konnect_id: int
    konnect_name: str
    status: str
    canvas_json: dict[str, Any]
    webhook_url: str


class UpdateStatusIn(BaseModel):
    status: Literal["Draft", "DELETED", "Published"]


# --- task logs ----------------------------------------------------------------------------
class TaskLogOut(BaseModel):
    id: int
    konnect_id: int
    status: str
    task_date: datetime
    data: dict[str, Any]


class TaskLogList(BaseModel):
    task_logs: list[TaskLogOut]
    total: int


class TaskOut(BaseModel):
    id: int
    task_date: datetime
    step_id: str
    app_name: str
    status: str
    data: dict[str, Any]


class TaskList(BaseModel):
    tasks: list[TaskOut]


# --- Members (routes/members.py) -------------------------------------------------------------------------

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


# --- Widgets (routes/widgets.py) -------------------------------------------------------------------------


class WidgetOut(BaseModel):
    id: str
    name: str
    url: str = Field(description="The frame URL on the AI host, with authToken appended")


class WidgetList(BaseModel):
    widgets: list[WidgetOut]
    ai_host_configured: bool
