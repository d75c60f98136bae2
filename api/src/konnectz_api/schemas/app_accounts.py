"""App accounts, their rate budgets and OAuth clients (``routes/app_accounts.py``, ``routes/credentials.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, field_validator


class RateBudgetOut(BaseModel):
    """An app account's rate budget (docs/rate-budgets.md): its rate, where it comes from, its use."""

    account_id: int
    rate_limit_rps: float | None = Field(description="The owner's override (requests/second); null: the app's own")
    app_rate_rps: float | None = Field(description="The app's own rate (its manifest); null: the app sets none")
    rate_rps: float | None = Field(description="The rate the runners enforce; null: no budget")
    source: Literal["override", "app default", "none"]
    burst: int = Field(description="Requests that may leave at once after an idle time")
    tokens_left: float | None = Field(default=None, description="Requests that may leave now without waiting")
    used_last_minute: int | None = Field(default=None, description="Requests sent in the last 60 seconds")
    live: bool = Field(description="False when the shared budget store (NATS) could not be read")


class RateBudgetIn(BaseModel):
    rate_limit_rps: float | None = Field(
        default=None,
        description="Requests per second for this account, from 0.01 to 1000; null clears it (the app's own rate)",
    )

    @field_validator("rate_limit_rps")
    @classmethod
    def _bounds(cls, value: float | None) -> float | None:
        if value is None:
            return None
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("must be a number of requests per second")
        if not 0.01 <= value <= 1000:
            raise ValueError("must be between 0.01 and 1000 requests per second")
        return round(value, 4)


class AppAccountOut(BaseModel):
    id: int
    name: str = Field(description="The account's label (editable)")
    created_at: datetime
    # rate budgets
    rate_budget: RateBudgetOut | None = Field(default=None, description="The account's rate budget and its use")


class AppAccountList(BaseModel):
    authorized_app_accounts: list[AppAccountOut]


class TokenFieldOut(BaseModel):
    id: str
    name: str = Field(description="Title-cased label")
    instructions: str
    secret: bool
    required: bool


class AuthUrlIn(BaseModel):
    app_id: int = Field(ge=1, lt=2**31)
    redirect_url: str = Field(default="", max_length=2000)
    app_user_id: int | None = Field(default=None, ge=1, lt=2**63, description="Re-authorise this account")
    method: Literal["oauth", "token"] | None = Field(
        default=None, description="token: an OAuth2 app's second method (a pasted token), when its manifest has one"
    )


class AuthUrlOut(BaseModel):
    type: Literal["oauth", "token", "none"]
    auth_url: str | None = Field(description="OAuth2 apps: the provider's consent page (PKCE, signed state)")
    fields: list[TokenFieldOut] = Field(default_factory=list, description="Token apps: the fields to fill")
    instructions: str = ""


class OAuthClientOut(BaseModel):
    """An OAuth2 app's client on this server, as the Manage Accounts drawer shows it (never the secret)."""

    app_id: int
    app_key: str
    configured: bool
    source: Literal["environment", "settings"] | None = Field(
        description="environment: KONNECTZ_OAUTH_CLIENTS (wins, read-only here); settings: entered by an administrator"
    )
    client_id: str | None = Field(description="Shown to those who can configure it only")
    client_secret: str | None = Field(description="The mask when a secret is stored, else null: never the secret")
    redirect_url: str = Field(description="The redirect URL to register with the provider")
    can_configure: bool = Field(
        description="The caller may enter or remove the client: an administrator, named by the installer "
        "(KONNECTZ_ADMIN_EMAILS or `python -m konnectz_api admin grant`), never inferred"
    )
    who_can_configure: str = Field(
        description="Who may configure OAuth apps and how one becomes an administrator (the 403's message)"
    )
    token_method: str | None = Field(description="The label of the app's second method (a pasted token), if any")


class OAuthClientIn(BaseModel):
    client_id: str = Field(min_length=1, max_length=500)
    client_secret: str = Field(
        default="", max_length=2000, description="Empty or the mask: keep the stored secret (required the first time)"
    )


class AuthorizationIn(BaseModel):
    app_id: int = Field(ge=1, lt=2**31)
    redirect_url: str = Field(default="", max_length=2000)
    app_user_id: int | None = Field(default=None, ge=1, lt=2**63)
    method: Literal["oauth", "token"] | None = Field(
        default=None, description="token: connect an OAuth2 app with its token method's fields"
    )
    auth_response: dict[str, str] = Field(
        max_length=50,
        description="Token apps: field id to value. OAuth2 apps: code and state from the provider's redirect.",
    )

    @field_validator("auth_response")
    @classmethod
    def _bounded(cls, value: dict[str, str]) -> dict[str, str]:
        for key, item in value.items():
            if len(key) > 100 or len(item) > 8000 or "\x00" in item or "\x00" in key:
                raise ValueError("values must be at most 8000 characters without NUL characters")
        return value


class AuthorizationOut(BaseModel):
    status: str
    app_user_id: int
    name: str


class UpdateLabelIn(BaseModel):
    label: str = Field(min_length=1, max_length=255)

    @field_validator("label")
    @classmethod
    def _clean(cls, value: str) -> str:
        value = value.strip()
        if not value or any(ord(ch) < 32 for ch in value):
            raise ValueError("must be a non-empty name without control characters")
        return value


class UpdateAccountStatusIn(BaseModel):
    status: Literal["REMOVE"]


class AccountStatusOut(BaseModel):
    message: Literal["SUCCESS", "FAILURE"]
    details: str
