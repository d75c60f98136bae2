"""Sign-up, sign-in, passwords and the profile (``routes/auth.py``, ``routes/profile.py``,
``routes/password_reset.py``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, EmailStr, Field, field_validator

PASSWORD_MIN = 8


class EmailIn(BaseModel):
    email: EmailStr


class SignupIn(BaseModel):
    email: EmailStr
    first_name: str = Field(min_length=1, max_length=100)
    last_name: str = Field(default="", max_length=100)
    password: str = Field(min_length=PASSWORD_MIN, max_length=200)
    password_confirmation: str
    is_admin: bool = False

    @field_validator("first_name", "last_name")
    @classmethod
    def _no_control_characters(cls, value: str) -> str:
        if any(ord(ch) < 32 for ch in value):
            raise ValueError("must not contain control characters")
        return value


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
    timezone: str | None = Field(
        default=None,
        max_length=64,
        description="A GMT offset GMT+HH:MM or GMT-HH:MM (hours 00-14, minutes 00, 15, 30 or 45), e.g. GMT+05:30, "
        "or an IANA time zone of the options, e.g. Europe/Berlin; anything else is a 422 that says why",
    )

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
    is_admin: bool = Field(
        description="An administrator: named by the installer (KONNECTZ_ADMIN_EMAILS, or granted with "
        "`python -m konnectz_api admin grant`), e-mail verified"
    )
