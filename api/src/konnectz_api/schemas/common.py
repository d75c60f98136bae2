"""The replies every resource shares: a message, a key, a failure."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Message(BaseModel):
    message: str


class KeyReply(BaseModel):
    key: str
    message: str


ReplyStatus = Literal["SUCCESS", "FAILURE"]


class FailureReply(BaseModel):
    status: Literal["FAILURE"] = "FAILURE"
    message: str
