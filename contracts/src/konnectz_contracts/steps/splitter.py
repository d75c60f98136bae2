"""Splitter (in-house add-on): split a text into segments and keep one of them, or all.

``input`` (may carry references) is split at ``separator`` (``\\n``, ``\\t`` mean newline and tab);
a value that already is a list is taken as its segments. Each segment is trimmed. ``segment``:

- ``First`` (default), ``Second``, ``Last``, ``Second to Last``: ``{"output": "<segment>"}``; when
  the text has too few segments the output is ``""`` and the task log says so (not an error);
- ``All``: ``{"output": [<segments>], "count": n}``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from konnectz_contracts.model import StepBase

__all__ = ["KIND", "SEGMENTS", "Config", "Segment"]

KIND = "splitter"

Segment = Literal["First", "Second", "Last", "Second to Last", "All"]
SEGMENTS: tuple[str, ...] = ("First", "Second", "Last", "Second to Last", "All")


class Config(StepBase):
    kind: Literal["splitter"] = "splitter"
    input: str = Field(default="", description="The text to split; may carry references")
    separator: str = Field(default=",", min_length=1, max_length=100)
    segment: Segment = "First"
