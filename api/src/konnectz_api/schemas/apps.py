"""The app catalogue: apps, their events and the fields of an event (``routes/apps.py``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class AppOut(BaseModel):
    id: int
    name: str
    image_url: str | None
    status: str = Field(description="Active or Beta")
    account_count: int = Field(default=0, description="The caller's linked accounts of this app")
    provider: str = Field(description="The app's key")
    app_type: str = Field(description="api, ADD_ON or WEBHOOK")
    auth_type: str | None = Field(description="OAuth2 (popup), Token (fields) or null (no account)")
    categories: list[str] = Field(default_factory=list)


class AppList(BaseModel):
    apps: list[AppOut]
    total_apps: int


class AppEventOut(BaseModel):
    id: str = Field(description="The event key (shown as value)")
    name: str = Field(description="The event label (shown as label)")
    kind: Literal["trigger", "action", "search"]
    side: Literal["left", "right"] = Field(description="left: starts a konnect; right: an action or search")
    help: str = ""


class AppEventList(BaseModel):
    app_events: list[AppEventOut]


class OptionOut(BaseModel):
    id: str = Field(description="The option's value")
    name: str = Field(description="The option's label")


class EventConfigOut(BaseModel):
    """One configuration field of an event."""

    id: str = Field(description="The field key")
    config_key: str
    title: str
    label: str
    key_value_type: str = Field(description="string, text, integer, number, boolean, datetime, select, ...")
    type: Literal["text", "select"] = Field(description="select when options are static or fetched")
    config_key_required: bool
    sequence: int = Field(description=">= 1: chosen in order, each choice loads the next (details call)")
    help: str = ""
    default: Any = None
    options: list[OptionOut] = Field(default_factory=list)
    dynamic: bool = Field(default=False, description="Options come from the details call, through an account")
    depends_on: list[str] = Field(default_factory=list)


class EventConfigList(BaseModel):
    app_event_configurations: list[EventConfigOut]
    fetch_fields: bool = Field(description="The event lists more fields live (fetch-fields)")


class ConfigOptions(BaseModel):
    config_key: str
    options: list[OptionOut]


class FetchedFields(BaseModel):
    fields: list[EventConfigOut]


class McpFieldOut(BaseModel):
    """One argument of an MCP tool, as an editor field (from the tool's input JSON Schema)."""

    name: str = Field(description="The argument's name (its config key is arg.<name>)")
    label: str
    type: str = Field(description="The JSON type: string, integer, number, boolean, object, array")
    required: bool
    help: str = ""
    options: list[str] = Field(default_factory=list, description="The enum's values, when it has one")


class McpToolOut(BaseModel):
    name: str
    label: str = Field(description="The name, and the description's first line")
    description: str = ""
    input_schema: dict[str, Any]
    fields: list[McpFieldOut]


class McpToolList(BaseModel):
    server: str = Field(description="The server's URL, without its query")
    tools: list[McpToolOut]
