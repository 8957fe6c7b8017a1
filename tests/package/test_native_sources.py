"""The native core's sources: every ``unsafe`` block is in ``native/src/lxml.rs`` (the reading of
lxml's and libxml2's structs), each under a ``SAFETY:`` comment; the rest of the core is safe Rust."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "native" / "src"


def test_unsafe_code_is_the_tree_reading_alone_each_with_its_safety_comment() -> None:
    sources = sorted(SRC.glob("*.rs"))
    assert SRC / "lxml.rs" in sources
    for path in sources:
        code = [line.split("//")[0] for line in path.read_text(encoding="utf-8").splitlines()]
        uses = [i for i, line in enumerate(code) if re.search(r"\bunsafe\b", line)]
        if path.name != "lxml.rs":
            assert not uses, f"{path.name}: unsafe outside lxml.rs (lines {[i + 1 for i in uses]})"
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        assert uses
        for i in uses:
            assert re.search(r"\bunsafe \{", code[i]), f"lxml.rs:{i + 1}: only unsafe blocks, no unsafe fn or impl"
            above = i - 1
            while above >= 0 and lines[above].strip().startswith("//") and "SAFETY:" not in lines[above]:
                above -= 1
            assert above >= 0 and "// SAFETY:" in lines[above], f"lxml.rs:{i + 1}: an unsafe block without SAFETY:"
