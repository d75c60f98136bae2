"""Bounded request parameters shared by the list routes.

Every id is a positive 64-bit integer (a larger one answers 422, never a database error), page
indexes are bounded so an offset cannot overflow, and free text refuses NUL and other control
characters that PostgreSQL cannot store or that have no business in a search box.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import AfterValidator

MAX_ID = 2**63 - 1
MAX_PAGE_INDEX = 100_000
MAX_PAGE_SIZE = 200
MAX_SEARCH = 200


def no_control_characters(value: str) -> str:
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError("must not contain control characters")
    return value


def no_control_characters_opt(value: str | None) -> str | None:
    return None if value is None else no_control_characters(value)


def like_pattern(text: str) -> str:
    """``%text%`` for ILIKE with the wildcards ``%``, ``_`` and the escape ``\\`` taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


IdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="A positive 64-bit id")]
PageIndex = Annotated[int, Query(ge=1, le=MAX_PAGE_INDEX, description="1-based page number")]
#: A list route's page size (each route keeps its own default).
PageSize = Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)]
SearchText = Annotated[
    str | None,
    Query(
        max_length=MAX_SEARCH,
        description="Matched anywhere in the name, case-insensitively; `%` and `_` are "
        "literal. Applied only when longer than 1 character.",
    ),
    AfterValidator(no_control_characters_opt),
]
