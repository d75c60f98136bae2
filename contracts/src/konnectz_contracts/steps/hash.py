"""Hash (in-house add-on): the digest of a text, for signatures, de-duplication keys or checksums.

From the canvas: the fields ``text`` (references allowed, e.g. ``{{node-1.email}}``), ``algorithm``
(SHA-256 — the default —, SHA-512, SHA-1 or MD5) and ``encoding`` (hex — the default — or base64).
Output: ``{"hash", "algorithm", "encoding", "length"}`` (``length``: characters of the text hashed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from konnectz_contracts.compiling import config_values, fail, is_blank, validated
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["ALGORITHMS", "KIND", "PROVIDERS", "Config", "compile_node"]

KIND = "hash"
PROVIDERS = ("hash",)  # the catalogue app (catalogue/apps/hash.yaml) whose nodes compile to this kind
ALGORITHMS = ("sha256", "sha512", "sha1", "md5")


class Config(StepBase):
    kind: Literal["hash"] = "hash"
    text: str = Field(max_length=100_000)
    algorithm: Literal["sha256", "sha512", "sha1", "md5"] = "sha256"
    encoding: Literal["hex", "base64"] = "hex"


def compile_node(node: Node) -> Config:
    values = config_values(node)
    if is_blank(values.get("text")):
        raise fail(node, "enter the text to hash")
    algorithm = values.get("algorithm") or "sha256"
    if algorithm not in ALGORITHMS:
        raise fail(node, f"the algorithm must be one of {', '.join(ALGORITHMS)}")
    return validated(
        Config,
        node,
        id=node.id,
        name=node.detail.name or "Hash",
        text=str(values["text"]),
        algorithm=algorithm,
        encoding=values.get("encoding") or "hex",
    )
