"""The ``report`` subcommand: one self-contained HTML file about an index (plots as inline SVG
made with matplotlib, no network resources).

Built from the per-URL records: the verdict of each URL's last fetch over time (binned by the
time of that fetch; the records keep no log of earlier verdicts), the distances of the dropped
copies to the pages they duplicate and of the last changes, the largest duplicate clusters, the
mean interval between observed changes per URL, and the URLs that changed most.
"""

from __future__ import annotations

import html
import io
from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from scrapy_simhash.commands.reports import LAST_VERDICTS, CommandError, iso, iter_page_records, last_verdict
from scrapy_simhash.commands.rules import fetches_saved, hosts_of
from scrapy_simhash.fingerprint.simhash import hamming
from scrapy_simhash.store.record import PageRecord

if TYPE_CHECKING:
    from scrapy_simhash.store.index import SimhashIndex

_TOP = 15


def collect(index: SimhashIndex, change_threshold: int) -> dict[str, Any]:
    """The report's data, from one pass over the records."""
    fetches: list[tuple[float, str]] = []
    duplicate_distances: list[int] = []
    change_distances: list[int] = []
    clusters: defaultdict[str, list[str]] = defaultdict(list)
    intervals: list[float] = []
    changing: list[tuple[int, int, str]] = []
    keys: list[str] = []
    for key, record in iter_page_records(index):
        keys.append(key)
        fetches.append((record.last_fetched, last_verdict(record, change_threshold)))
        if record.duplicate_of is not None:
            clusters[record.duplicate_of].append(key)
        change_distances += [d for _, d in record.history if d is not None]
        if record.change_count:
            intervals.append((record.last_changed - record.first_seen) / record.change_count)
            changing.append((record.change_count, record.fetch_count, key))
    originals = list(clusters)
    for original, fp in zip(originals, index.get_many(originals)):
        if fp is None:
            continue
        for raw in index.get_records(clusters[original]):
            copy = PageRecord.parse(raw)
            if copy is not None and copy.last_fp is not None:
                duplicate_distances.append(hamming(copy.last_fp, fp))
    largest = sorted(clusters.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:_TOP]
    changing.sort(key=lambda t: (-t[0], -t[1], t[2]))
    return {
        "fetches": fetches,
        "duplicate_distances": duplicate_distances,
        "change_distances": change_distances,
        "clusters": largest,
        "intervals": intervals,
        "changing": changing[:_TOP],
        "rules": fetches_saved(index, hosts_of(keys))[:_TOP],
        "max_distance": index.max_distance,
        "bits": index.bits,
    }


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend; :class:`CommandError` naming the fix without it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CommandError("report needs matplotlib: pip install 'scrapy-simhash[report]'") from None
    return plt


def _plots(data: dict[str, Any]) -> dict[str, str]:
    return {
        "verdicts": _svg(verdict_figure(data)),
        "distances": _svg(distance_figure(data)),
        "intervals": _svg(interval_figure(data)),
    }


def verdict_figure(data: dict[str, Any]) -> Any:
    """The verdict of each URL's last fetch, stacked, in 24 bins of the time of that fetch."""
    fig, ax = _pyplot().subplots(figsize=(8, 3.2))
    from matplotlib.dates import date2num

    fetches = data["fetches"]
    if fetches:
        times = [t for t, _ in fetches]
        lo, hi = min(times), max(times)
        nbins = 24
        width = max((hi - lo) / nbins, 1.0)
        edges = [lo + i * width for i in range(nbins + 1)]
        bottom = [0] * nbins
        for verdict in LAST_VERDICTS:
            counts = [0] * nbins
            for t, v in fetches:
                if v == verdict:
                    counts[min(int((t - lo) / width), nbins - 1)] += 1
            days = [datetime.fromtimestamp(e, timezone.utc) for e in edges[:-1]]
            starts = date2num(days)  # type: ignore[no-untyped-call]  # matplotlib.dates is untyped
            ax.bar(starts, counts, width=width / 86400, bottom=bottom, align="edge", label=verdict)
            bottom = [b + c for b, c in zip(bottom, counts)]
        ax.legend(fontsize=8)
        ax.xaxis_date()
        fig.autofmt_xdate()
    ax.set_title("Verdict of each URL's last fetch, by time of that fetch (UTC)")
    ax.set_ylabel("URLs")
    return fig


def distance_figure(data: dict[str, Any]) -> Any:
    """Distances of the dropped copies to their originals and of the changes between fetches, on
    a log scale (a few drops stay visible beside thousands of changes); a refetch at distance 0
    did not change and is left out (its count is in the legend), else it would dwarf the rest."""
    fig, ax = _pyplot().subplots(figsize=(8, 3.2))
    copies = data["duplicate_distances"]
    changes = [d for d in data["change_distances"] if d > 0]
    unchanged = len(data["change_distances"]) - len(changes)
    top = max([data["max_distance"], *copies, *changes, 1])
    ax.hist(
        [copies, changes],
        bins=list(range(top + 2)),
        label=["dropped copy to its original", f"change between fetches ({unchanged} at distance 0 left out)"],
        align="left",
        log=bool(copies or changes),
    )
    ax.axvline(data["max_distance"] + 0.5, color="grey", linestyle=":", label="SIMHASH_MAX_DISTANCE")
    ax.set_title(f"Hamming distances ({data['bits']}-bit fingerprints)")
    ax.set_xlabel("distance")
    ax.set_ylabel("count (log scale)" if copies or changes else "count")
    ax.legend(fontsize=8)
    return fig


#: Tick marks of the interval axis (log scale): seconds and their labels.
DURATION_TICKS: tuple[tuple[float, str], ...] = (
    (1, "1 s"),
    (10, "10 s"),
    (60, "1 min"),
    (600, "10 min"),
    (3600, "1 h"),
    (6 * 3600, "6 h"),
    (86400, "1 d"),
    (7 * 86400, "1 w"),
    (30 * 86400, "30 d"),
    (365 * 86400, "1 y"),
    (10 * 365 * 86400, "10 y"),
)


def interval_figure(data: dict[str, Any]) -> Any:
    """The mean interval between observed changes per changed URL, on a log axis labelled in
    readable durations (``10 min``, ``6 h``, ``1 w``) that spans from the tick below the
    shortest interval to the tick above the longest."""
    fig, ax = _pyplot().subplots(figsize=(8, 3.2))
    seconds = [i for i in data["intervals"] if i > 0]
    if seconds:
        import numpy as np
        from matplotlib.ticker import FixedFormatter, FixedLocator, NullFormatter

        marks = [t for t, _ in DURATION_TICKS]
        low = max([t for t in marks if t <= min(seconds)], default=min(seconds))
        high = min([t for t in marks if t >= max(seconds) and t > low], default=max(seconds) * 2)
        ticks = [(t, label) for t, label in DURATION_TICKS if low <= t <= high]
        ax.hist(seconds, bins=np.geomspace(low, high, 25).tolist())
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        ax.xaxis.set_major_locator(FixedLocator([t for t, _ in ticks]))
        ax.xaxis.set_major_formatter(FixedFormatter([label for _, label in ticks]))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_title("Mean interval between observed changes, per changed URL")
    ax.set_xlabel("interval (log scale)")
    ax.set_ylabel("URLs")
    return fig


def render(data: dict[str, Any], title: str) -> str:
    """The HTML page of ``collect``'s data."""
    plots = _plots(data)
    esc = html.escape
    counts = Counter(v for _, v in data["fetches"])
    summary = "".join(f"<tr><td>{esc(v)}</td><td>{counts[v]}</td></tr>" for v in LAST_VERDICTS)
    clusters = "".join(
        f"<tr><td>{len(copies) + 1}</td><td>{esc(original)}</td><td>"
        + "<br>".join(esc(c) for c in sorted(copies)[:10])
        + (f"<br>... and {len(copies) - 10} more" if len(copies) > 10 else "")
        + "</td></tr>"
        for original, copies in data["clusters"]
    )
    changing = "".join(
        f"<tr><td>{changes}</td><td>{fetches}</td><td>{esc(key)}</td></tr>"
        for changes, fetches, key in data["changing"]
    )
    rules = (
        "".join(
            f"<tr><td>{r['skipped']}</td><td>{r['explored']}</td><td>{r['copies']}</td><td>{esc(r['host'])}</td>"
            f"<td>{esc(r['rule'])}</td></tr>"
            for r in data["rules"]
        )
        or '<tr><td colspan="5">none (SIMHASH_URL_RULES off, or no rule applied yet)</td></tr>'
    )
    generated = iso(datetime.now(timezone.utc).timestamp())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .5em;vertical-align:top;text-align:left}}
figure{{margin:1em 0}} svg{{max-width:100%;height:auto}}</style></head>
<body><h1>{esc(title)}</h1><p>Generated {generated} by scrapy-simhash.</p>
<h2>Last verdict of each URL</h2><table><tr><th>verdict</th><th>URLs</th></tr>{summary}</table>
<figure id="plot-verdicts">{plots["verdicts"]}</figure>
<h2>Distances</h2><figure id="plot-distances">{plots["distances"]}</figure>
<h2>Largest duplicate clusters</h2>
<table id="clusters"><tr><th>pages</th><th>original (kept)</th><th>copies (dropped)</th></tr>{clusters}</table>
<h2>Change intervals</h2><figure id="plot-intervals">{plots["intervals"]}</figure>
<h2>Most-changing pages</h2>
<table id="changing"><tr><th>changes</th><th>fetches</th><th>URL</th></tr>{changing}</table>
<h2>Fetches saved by URL rules</h2>
<table id="url-rules"><tr><th>requests skipped</th><th>explored</th><th>copies</th><th>host</th><th>rule</th></tr>{rules}</table>
</body></html>
"""


def write_report(index: SimhashIndex, path: str, change_threshold: int) -> str:
    """Write the report of ``index`` to ``path``; return the path."""
    page = render(collect(index, change_threshold), f"scrapy-simhash report: {index.path}")
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    except OSError as exc:
        raise CommandError(f"could not write {path}: {exc.strerror or exc}") from None
    return path
