"""What a kept page's novelty evidence costs compressed, by codec: zlib levels, zstd levels, zstd
with a dictionary trained per site. Measured on the text the evidence holds (what the page shows,
``OwnText.novelty_text``'s text) of real pages: ``../shared/data`` (the AEB and zh-web-cee pages) and the
real-site pages installed for ``benchmarks/realsite`` (up to ``--pages`` per site, in path order).

    nice .venv/bin/python benchmarks/scale/evidence_codecs.py [--pages 200]

A dictionary is trained on the first half of a site's pages and measured on the second half (its
own bytes, amortised over the half it was measured on, are printed beside); the data's pages come
from many sites, one or two pages each: one dictionary for the whole set, trained the same way.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realsite"))

import zstandard

from scrapy_simhash import Fingerprinter
from scrapy_simhash.fingerprint.simhash import EmptyTextError

DICT_BYTES = 16 * 1024


def shown_text(fper: Fingerprinter, html: bytes) -> bytes | None:
    """The text a kept page's evidence holds (its own lines, then the rest it shows), UTF-8."""
    try:
        page = fper.fingerprint_page(html)
    except EmptyTextError:
        return None
    own = page.own
    if own is None or not own.has_text:
        return None
    lines = own._lines or []
    rest = own._rest or []
    return "\n".join(lines + rest).encode("utf-8", "surrogatepass")


def corpora(pages: int) -> dict[str, list[bytes]]:
    from helpers.data import load_pages

    fper = Fingerprinter()
    out: dict[str, list[bytes]] = {}
    for name, htmls in load_pages().items():
        out[name] = [t for t in (shown_text(fper, h) for h in htmls) if t]
    import run  # benchmarks/realsite

    for site in run.SITES:
        root = Path(site.root)
        if not (root / site.start).is_file():
            continue
        files = sorted(
            p for p in root.rglob("*.html") if site.include is None or __import__("re").search(site.include, str(p))
        )
        texts = [t for t in (shown_text(fper, p.read_bytes()) for p in files[: 2 * pages]) if t][:pages]
        if len(texts) >= 20:
            out[f"site {site.name}"] = texts
    return out


def measure(texts: list[bytes]) -> dict[str, tuple[float, float]]:
    """Codec -> (mean compressed bytes per page, microseconds per page to compress and decompress)."""
    train, test = texts[: len(texts) // 2], texts[len(texts) // 2 :]
    codecs: dict[str, tuple] = {}
    for level in (1, 6, 9):
        codecs[f"zlib {level}"] = (lambda t, lv=level: zlib.compress(t, lv), zlib.decompress)
    for level in (1, 3, 9, 19):
        c, d = zstandard.ZstdCompressor(level=level), zstandard.ZstdDecompressor()
        codecs[f"zstd {level}"] = (c.compress, d.decompress)
    try:
        dictionary = zstandard.train_dictionary(DICT_BYTES, train)
    except zstandard.ZstdError:
        dictionary = None
    if dictionary is not None:
        for level in (3, 19):
            c = zstandard.ZstdCompressor(level=level, dict_data=dictionary)
            d = zstandard.ZstdDecompressor(dict_data=dictionary)
            codecs[f"zstd {level} + site dict"] = (c.compress, d.decompress)
    out = {}
    for name, (comp, decomp) in codecs.items():
        start = time.perf_counter()
        sizes = []
        for t in test:
            packed = comp(t)
            assert decomp(packed) == t
            sizes.append(len(packed))
        out[name] = (sum(sizes) / len(sizes), (time.perf_counter() - start) / len(test) * 1e6)
    out["(raw UTF-8)"] = (sum(map(len, test)) / len(test), 0.0)
    if dictionary is not None:
        out["(dict bytes per page)"] = (len(dictionary.as_bytes()) / len(test), 0.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    args = parser.parse_args()
    texts = corpora(args.pages)
    results = {name: measure(pages) for name, pages in texts.items()}
    names = list(dict.fromkeys(n for r in results.values() for n in r))
    print(f"{'codec':24}" + "".join(f"{c[:19]:>20}" for c in results))
    print(f"{'(pages measured)':24}" + "".join(f"{len(t) - len(t) // 2:>20}" for t in texts.values()))
    for n in names:
        row = "".join(
            f"{results[c][n][0]:>11,.0f} B {results[c][n][1]:>5.0f}us" if n in results[c] else f"{'':>20}"
            for c in results
        )
        print(f"{n:24}{row}")


if __name__ == "__main__":
    main()
