"""What a Han character weighs against Latin letters: the Rust book and its Chinese translation.

    nice .venv/bin/python benchmarks/quality/char_weight.py

Both books are in ``../shared/data/revisions`` (``rust-lang/book`` and ``KaiserY/trpl-zh-cn``): the
newest version of each chapter that both have, its prose (code blocks, inline code, link targets,
HTML tags and Markdown markers left out). Printed: the English characters per Chinese character,
and the weight ``w`` of a Han character (CJK punctuation included) that makes the Chinese text,
its other characters counted 1, as long as the English (``novelty.DENSE_WEIGHT`` is 3).
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_pairs as bp

_HAN = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff]")
MIN_HAN = 300  # chapters with fewer Han characters (a list of links, a stub) are left out


def prose(markdown: str) -> str:
    """The prose of a Markdown chapter, white space collapsed."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"^\s*[#>*-]+", "", text, flags=re.MULTILINE)
    return " ".join(re.sub(r"<[^>]+>", "", text).split())


def main() -> int:
    latest: dict[tuple[str, str], tuple[str, str]] = {}
    for r in bp.load_revisions():
        key = (r["repo"], r["path"])
        if r["repo"] in ("rust-lang/book", "KaiserY/trpl-zh-cn") and (key not in latest or r["date_b"] > latest[key][0]):
            latest[key] = (r["date_b"], r["text_b"])
    en = {path: prose(text) for (repo, path), (_, text) in latest.items() if repo == "rust-lang/book"}
    zh = {path: prose(text) for (repo, path), (_, text) in latest.items() if repo == "KaiserY/trpl-zh-cn"}
    pairs = [(en[p], zh[p]) for p in sorted(set(en) & set(zh)) if len(_HAN.findall(zh[p])) >= MIN_HAN]
    en_chars = sum(len(e) for e, _ in pairs)
    zh_chars = sum(len(z) for _, z in pairs)
    han = sum(len(_HAN.findall(z)) for _, z in pairs)
    print(f"{len(pairs)} chapters: {en_chars} English characters, {zh_chars} Chinese ({han} Han)")
    print(f"English characters per Chinese character: {en_chars / zh_chars:.2f} "
          f"(median chapter {statistics.median(len(e) / len(z) for e, z in pairs):.2f})")
    print(f"weight of a Han character that makes the two as long: {(en_chars - (zh_chars - han)) / han:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
