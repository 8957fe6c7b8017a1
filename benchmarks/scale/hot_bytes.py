"""Where every byte of a URL's hot part goes on LMDB: per sub-database, its entries, the bytes of
their keys and values, LMDB's per-entry overhead and the pages' slack, per URL; the same URLs as
``bytes_per_url.py`` (the real pages of ``../shared/data`` through ``ChangeTracker.observe`` with the
default settings, 75% kept, 25% near-duplicates), the same decision path.

    nice .venv/bin/python benchmarks/scale/hot_bytes.py [--urls 20000]

Per URL, for each sub-database: ``entries``; ``keys`` and ``values``: their bytes (a ``dupsort``
database's values are the keys of its sub-pages); ``overhead``: 10 bytes an entry (the node's
8-byte header and its 2-byte slot in the page); ``slack``: the pages' bytes that hold none of
these (free space left by page splits, branch pages, page headers); ``pages``: what ``data.mdb``
holds for it (``SimhashIndex.info``'s figure). The URL keys are ``https://siteN.example/NNNNNNNN``
(31 characters): a real crawl's URLs are longer, and pay for it once (in their ``records`` entry;
every other sub-database names an entry by its 4-byte id). ``hot, in all``: all but the evidence
and the change sketches (``sketches``, read only with a known URL's or a candidate's record);
``and sketches``: with them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bytes_per_url import base_pages, run

from scrapy_simhash.store.index import SimhashIndex

_OVERHEAD = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=20_000)
    args = parser.parse_args()
    urls = args.urls
    directory = Path(tempfile.mkdtemp(prefix="simhash-hot-"))
    try:
        with SimhashIndex.open(directory / "idx", map_size=1 << 30) as index:
            run(index, base_pages(), urls)
            store = index._store
            env, shared = store._env, store._shared
            rows = []
            with env.begin() as txn:
                for name, db in sorted(shared.dbs.items()):
                    if db is None:
                        continue
                    st = txn.stat(db)
                    entries = keys = values = 0
                    for key, value in txn.cursor(db):
                        entries += 1
                        keys += len(key)
                        values += len(value)
                    pages = (st["branch_pages"] + st["leaf_pages"] + st["overflow_pages"]) * shared.psize
                    label = name.decode()
                    rows.append((label, entries, keys, values, pages))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print(f"{urls:,} URLs; bytes per URL")
    print(f"{'sub-database':14}{'entries':>9}{'keys':>8}{'values':>8}{'overhead':>10}{'slack':>8}{'pages':>8}")
    totals = [0.0] * 6
    sketches = [0.0] * 6
    for label, entries, keys, values, pages in rows:
        if not pages:
            continue
        overhead = _OVERHEAD * entries
        slack = pages - keys - values - overhead
        cells = [entries / urls, keys / urls, values / urls, overhead / urls, slack / urls, pages / urls]
        if label == "sketches":
            sketches = cells
        elif not label.startswith("evidence"):
            totals = [t + c for t, c in zip(totals, cells)]
        print(_row(label, cells))
    print(_row("hot, in all", totals))
    print(_row("and sketches", [t + c for t, c in zip(totals, sketches)]))


def _row(label: str, cells: list[float]) -> str:
    """One printed row: entries to two decimals, bytes whole."""
    widths, decimals = (9, 8, 8, 10, 8, 8), (2, 0, 0, 0, 0, 0)
    return f"{label:14}" + "".join(f"{c:>{w},.{d}f}" for c, w, d in zip(cells, widths, decimals))


if __name__ == "__main__":
    main()
