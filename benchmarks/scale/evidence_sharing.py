"""How much of a kept page's novelty evidence repeats across the pages of its site, and what
storing the repeats once per site would save: measured on real, distinct pages (the real-site
pages installed for ``benchmarks/realsite``, up to ``--pages`` per site in path order, and the AEB
and zh-web-cee pages of ``../shared/data``, many sites with one or two pages each).

    nice .venv/bin/python benchmarks/scale/evidence_sharing.py [--pages 200]

The evidence is what the page shows (``OwnText.novelty_text``'s text: its own lines, then the rest of its
lines). A line "repeats" when an earlier page of the same site showed it (pages taken in order, as
a crawl would store them). Printed per site, bytes per kept page: the raw text; the share of it in
repeated lines; zstd 3 of the whole text (what is stored today); content-addressed lines (zstd 3 of
the page's lines that no earlier page had, plus an 8-byte hash for each repeated line; the shared
lines are stored once, with the page that first had them); zstd 3 with a dictionary trained on the
site's first half, measured on its second half (the dictionary's bytes amortised over that half).

Not measured with ``bytes_per_url.py``'s synthetic URLs: they reuse 250 real pages for every kept
URL, so any sharing across pages would be flattered there (each page's text would repeat ~300 times).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import zstandard
from evidence_codecs import DICT_BYTES, corpora

REF_BYTES = 8


def measure(texts: list[bytes]) -> dict[str, float]:
    """Mean bytes per page of each way of storing the evidence of ``texts`` (one site's pages)."""
    codec = zstandard.ZstdCompressor(level=3)
    seen: set[bytes] = set()
    raw = repeated = whole = addressed = 0
    for text in texts:
        lines = text.split(b"\n")
        fresh = [line for line in lines if line not in seen]
        raw += len(text)
        repeated += sum(len(line) + 1 for line in lines if line in seen)
        whole += len(codec.compress(text))
        refs = len(lines) - len(fresh)
        addressed += (len(codec.compress(b"\n".join(fresh))) if fresh else 0) + REF_BYTES * refs
        seen.update(lines)
    n = len(texts)
    out = {
        "raw text": raw / n,
        "repeated share": repeated / max(raw, 1),
        "zstd 3 (today)": whole / n,
        "lines once per site": addressed / n,
    }
    train, test = texts[: n // 2], texts[n // 2 :]
    try:
        dictionary = zstandard.train_dictionary(DICT_BYTES, train)
    except zstandard.ZstdError:
        return out
    with_dict = zstandard.ZstdCompressor(level=3, dict_data=dictionary)
    plain = sum(len(codec.compress(t)) for t in test) / len(test)
    dicted = (sum(len(with_dict.compress(t)) for t in test) + len(dictionary.as_bytes())) / len(test)
    out["zstd 3, second half"] = plain
    out["+ site dict, second half"] = dicted
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    args = parser.parse_args()
    results = {name: measure(texts) for name, texts in corpora(args.pages).items()}
    rows = list(dict.fromkeys(r for res in results.values() for r in res))
    print(f"{'site':24}" + "".join(f"{r[:22]:>24}" for r in rows))
    for name, res in results.items():
        cells = "".join(
            f"{res[r]:>23.0%} " if r == "repeated share" else f"{res[r]:>21,.0f} B " if r in res else f"{'':>24}"
            for r in rows
        )
        print(f"{name[:24]:24}{cells}")
    total = {r: sum(res.get(r, 0) for res in results.values()) / len(results) for r in rows}
    print(
        f"{'(mean of the sites)':24}"
        + "".join(f"{total[r]:>23.0%} " if r == "repeated share" else f"{total[r]:>21,.0f} B " for r in rows)
    )


if __name__ == "__main__":
    main()
