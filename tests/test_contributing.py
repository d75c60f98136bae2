"""CONTRIBUTING.md shows the Hash add-on's files verbatim: a page that drifts from the code fails."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```[a-z]+ path=(?P<path>\S+)\n(?P<text>.*?)^```$", re.S | re.M)


def test_every_file_of_the_walk_through_is_the_one_in_the_repository() -> None:
    page = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    blocks = {m["path"]: m["text"] for m in BLOCK.finditer(page)}
    assert set(blocks) == {
        "contracts/src/konnectz_contracts/steps/hash.py",
        "runner/src/konnectz_runner/engine/steps/hash.py",
        "catalogue/apps/hash.yaml",
        "catalogue/icons/hash.svg",
        "tests/integration/test_hash_addon.py",
    }
    for path, text in blocks.items():
        assert (ROOT / path).read_text(encoding="utf-8") == text, f"CONTRIBUTING.md's {path} differs from the file"


def test_the_links_of_the_page_exist() -> None:
    page = re.sub(r"^```.*?^```$", "", (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"), flags=re.S | re.M)
    links = re.findall(r"\]\(([^)#]+)\)", page)
    assert links
    for link in links:
        assert (ROOT / link).exists(), link
