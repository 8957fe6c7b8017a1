"""What the change sketch costs per page: ``fingerprint_page`` against the same page without it.

    nice -n 10 .venv/bin/python benchmarks/realsite/sketch_cost.py [--pages N] [DIR ...]

Reads the HTML files of real documentation sites installed from Debian's packages (default: the
Python, Django and git documentation, where present), and times, in one process and alternating
page by page, (a) what the fingerprint needs: ``extract`` + the fingerprint of the extracted text,
and (b) ``Fingerprinter.fingerprint_page``, which also tokenises the page's other content-like
text (``Document.rest``) and computes the change sketch. Prints the medians, p90 and the
ratio, and the share of pages whose body text is larger than their fingerprinted text.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from scrapy_simhash import Fingerprinter
from scrapy_simhash.text.extract import extract

DEFAULT_DIRS = [
    "/usr/share/doc/python3.11/html/library",
    "/usr/share/doc/python-django-doc/html/ref",
    "/usr/share/doc/git-doc",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", default=DEFAULT_DIRS)
    ap.add_argument("--pages", type=int, default=150, help="pages per directory")
    args = ap.parse_args()
    pages = []
    for d in map(Path, args.dirs):
        if d.is_dir():
            pages += [p.read_bytes() for p in sorted(d.rglob("*.html"))[: args.pages]]
    if not pages:
        raise SystemExit("no HTML pages found: install python3.11-doc, python-django-doc or git-doc")
    fper = Fingerprinter()
    for body in pages[:20]:  # warm the tokenizer and the caches
        fper.fingerprint_page(body)
    base, full, larger = [], [], 0
    for body in pages:
        t0 = time.perf_counter()
        doc = extract(body, time_budget=fper.time_budget)
        try:
            fper.fingerprint_text(doc.text, doc.title)
        except ValueError:
            continue
        t1 = time.perf_counter()
        page = fper.fingerprint_page(body)
        t2 = time.perf_counter()
        base.append(t1 - t0)
        full.append(t2 - t1)
        larger += bool(doc.rest) and page.sketch is not None
    n = len(base)

    def ms(xs: list[float], q: float) -> float:
        return 1000 * sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]

    print(f"{n} pages; {larger} ({larger / n:.0%}) with body text beyond the fingerprinted text")
    print("| | median ms | p90 ms | total s |")
    print("| --- | --- | --- | --- |")
    for name, xs in (("fingerprint only (extract + SimHash)", base), ("fingerprint_page (+ change sketch)", full)):
        print(f"| {name} | {ms(xs, 0.5):.2f} | {ms(xs, 0.9):.2f} | {sum(xs):.2f} |")
    print(
        f"ratio of totals: {sum(full) / sum(base):.2f}; median of per-page ratios: "
        f"{statistics.median(f / b for f, b in zip(full, base)):.2f}"
    )


if __name__ == "__main__":
    main()
