"""Both doors as subprocesses (``scrapy-simhash`` and ``scrapy simhash``), ``dedup``, and the
HTML report in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.pages import EN_ARTICLES, ZH_ARTICLES, article_html

from scrapy_simhash import Fingerprinter, SimhashIndex
from scrapy_simhash.commands.cli import main
from scrapy_simhash.commands.dedup import dedup
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.fingerprint.fields import fields_text
from scrapy_simhash.fingerprint.novelty import OwnText

CONSOLE = str(Path(sys.executable).parent / "scrapy-simhash")


def sh(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        input=None if stdin is None else stdin.decode(),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    """An index with 3 pages (one copy) and 3,000 plain records (for a long export)."""
    path = tmp_path_factory.mktemp("cli") / "spider" / "pages"
    fp = Fingerprinter()
    with SimhashIndex.open(path) as index:
        tracker = ChangeTracker(index)
        tracker.observe("https://a.example/harbour", PageFingerprint.of(fp.fingerprint_html(article_html("harbour"))))
        tracker.observe("https://b.example/harbour", PageFingerprint.of(fp.fingerprint_html(article_html("harbour", site="Mirror"))))
        tracker.observe("https://a.example/orchard", PageFingerprint.of(fp.fingerprint_html(article_html("orchard"))))
        record = index.get_record("https://a.example/orchard")
        assert record is not None
        index.put_records((f"https://c.example/{i:05d}", record, None) for i in range(3000))
    return path


def test_console_door_reads_while_a_crawl_writes(index_dir):
    with SimhashIndex.open(index_dir) as writer:  # a crawl holds it open for writing
        writer.add("https://a.example/live", 0x1234_5678_9ABC_DEF0)
        result = sh(CONSOLE, str(index_dir.parent), "show", "https://b.example/harbour")
        assert result.returncode == 0, result.stderr
        assert "duplicate_of: https://a.example/harbour\n" in result.stdout and "Z\n" in result.stdout
        result = sh(CONSOLE, str(index_dir), "near", "--url", "https://a.example/harbour")
        assert result.stdout.split("\t")[-2:] == ["https://b.example/harbour", "https://a.example/harbour\n"]
        assert "keys: 3\n" in sh(CONSOLE, str(index_dir), "info").stdout


def test_console_door_errors(index_dir, tmp_path, capsys):
    (tmp_path / "data.mdb").write_bytes(b"not lmdb" * 100)
    result = sh(CONSOLE, str(tmp_path), "info")  # not an index
    assert result.returncode == 1 and result.stderr.startswith(f"error: {tmp_path} is not a scrapy-simhash index")
    assert result.stderr.count("\n") == 1
    for args, status in [
        ((str(tmp_path / "nowhere"), "info"), 1),
        ((str(index_dir), "near", "--url", "https://a.example/harbour", "-k", "6"), 2),
        ((str(index_dir), "frobnicate"), 2),
        (("info",), 2),
        (("-s", "SIMHASH_BITS=65", "explain", "x.html"), 2),
        (("dedup", str(tmp_path / "missing.jsonl"), "--field", "text"), 1),
    ]:
        try:
            status_seen: str | int | None = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            status_seen = exc.code
        err = capsys.readouterr().err
        assert status_seen == status, (args, err)
        assert "Traceback" not in err and err.strip(), args
        if status == 1:
            assert err.count("\n") == 1 and err.startswith("error: "), err


def test_a_closed_pipe_ends_quietly(index_dir):
    result = subprocess.run(
        f"{CONSOLE} {index_dir} export | head -n 1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0 and result.stderr == ""
    with SimhashIndex.open(index_dir, readonly=True) as index:
        assert index.get_record(json.loads(result.stdout)["key"]) is not None  # a line, whole


def test_scrapy_door(index_dir):
    result = sh(
        sys.executable, "-m", "scrapy", "simhash", "spider", "dropped", "-s", f"SIMHASH_DIR={index_dir.parent.parent}"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("https://b.example/harbour\thttps://a.example/harbour\t")
    result = sh(sys.executable, "-m", "scrapy", "simhash", "nospider", "info", "-s", f"SIMHASH_DIR={index_dir}")
    assert result.returncode == 1 and result.stderr.startswith("error: no simhash index at")


def _corpus() -> tuple[list[dict], set[int]]:
    """Articles, near copies (their line numbers: the lines to drop) and first paragraphs alone (kept)."""
    rows: list[dict] = []
    copies = set()
    for name, (title, paragraphs) in {**EN_ARTICLES, **ZH_ARTICLES}.items():
        rows.append({"id": name, "title": title, "text": paragraphs})
    for name, (title, paragraphs) in EN_ARTICLES.items():
        rows.append({"id": name + "-copy", "title": title, "text": [paragraphs[0] + " (updated)", *paragraphs[1:]]})
        copies.add(len(rows))
        rows.append({"id": name + "-part", "title": title, "text": paragraphs[:1]})
    return rows, copies


def test_dedup_drops_the_near_copies_and_keeps_the_rest(tmp_path):
    rows, copies = _corpus()
    lines = [json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in rows] + [
        b"not json\n",
        b"[1]\n",
        b'{"x": 1}\n',
    ]
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"".join(lines))
    kept, report = tmp_path / "kept.jsonl", tmp_path / "dropped.jsonl"
    with source.open("rb") as src, kept.open("wb") as out, report.open("wb") as rep:
        result = dedup(src, out, rep, ("title", "text"), {"bits": 64}, workers=1)
    dropped = [json.loads(x) for x in report.read_text().splitlines()]
    assert {d["line"] for d in dropped} == copies
    assert all(d["cluster"] == d["kept_line"] and 0 <= d["distance"] <= 3 and d["adds"] < 100 for d in dropped)
    assert all(rows[d["kept_line"] - 1]["id"] + "-copy" == rows[d["line"] - 1]["id"] for d in dropped)
    assert kept.read_bytes() == b"".join(line for i, line in enumerate(lines, 1) if i not in copies)
    assert result.as_dict() == {
        "lines": len(lines),
        "kept": len(lines) - len(copies),
        "dropped": len(copies),
        "kept_adds": 0,
        "not_fingerprinted": {"not_json": 1, "not_an_object": 1, "no_fields": 1},
    }


def test_dedup_fingerprints_are_the_item_pipelines():
    from scrapy_simhash.commands.dedup import line_fingerprint

    fp = Fingerprinter()
    for row in _corpus()[0]:
        title, text = fields_text(row, ("title", "text"))
        assert line_fingerprint(fp, json.dumps(row).encode(), ("title", "text")) == fp.fingerprint_text(text, title)


def test_dedup_through_the_console_door_in_a_process_pool(tmp_path):
    rows, copies = _corpus()
    data = b"".join(json.dumps(r).encode() + b"\n" for r in rows * 3)  # every line repeated: 2/3 exact copies
    report = tmp_path / "report.jsonl"
    result = sh(
        CONSOLE,
        "dedup",
        "-",
        "--field",
        "text",
        "--field",
        "title",
        "--workers",
        "2",
        "--report",
        str(report),
        stdin=data,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.encode() == b"".join(
        json.dumps(r).encode() + b"\n" for i, r in enumerate(rows, 1) if i not in copies
    )
    assert f"dropped={len(rows) * 3 - len(rows) + len(copies)}" in result.stderr
    clusters = {json.loads(x)["cluster"] for x in report.read_text().splitlines()}
    assert clusters == {i for i in range(1, len(rows) + 1) if i not in copies}


def _browser() -> str | None:
    return next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


@pytest.mark.slow
def test_report_renders_in_headless_chromium(index_dir, tmp_path):
    browser = _browser()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("no Chromium in CI: ./dev test installs Debian's chromium")
        pytest.skip("no Chromium on this machine (./dev test installs it where it runs as root)")
    page = tmp_path / "report.html"
    result = sh(CONSOLE, str(index_dir), "report", "-o", str(page))
    assert result.returncode == 0, result.stderr
    flags = ["--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "<h1>scrapy-simhash report" in dom and dom.count("<svg") == 3
    assert 'id="plot-distances"' in dom and "https://b.example/harbour" in dom
    shot = tmp_path / "shot.png"
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", "--window-size=1000,2400", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000


def test_dev_help_prints_the_usage():
    result = sh("bash", str(Path(__file__).resolve().parents[2] / "dev"), "--help")
    assert result.returncode == 0 and "./dev test" in result.stdout and result.stderr == ""


@pytest.mark.parametrize(("bits", "k"), [(64, 3), (128, 6)])
def test_kept_lines_decide_as_brute_force(bits, k):
    import random

    from scrapy_simhash.commands.dedup import KeptLines

    rng = random.Random(bits)
    fps: list[int] = []
    for _ in range(3000):  # random fingerprints and copies of earlier ones with a few bits flipped
        fp = rng.getrandbits(bits)
        if fps and rng.random() < 0.5:
            fp = rng.choice(fps)
            for bit in rng.sample(range(bits), rng.randint(0, k + 2)):
                fp ^= 1 << bit
        fps.append(fp)
    kept: list[tuple[int, int]] = []
    with KeptLines(bits, k) as kept_lines:
        for line, fp in enumerate(fps, 1):
            near = [((fp ^ other).bit_count(), n) for n, other in kept if (fp ^ other).bit_count() <= k]
            expected = None if not near else (*min(near)[::-1], None)
            assert kept_lines.check_and_add(line, fp) == expected
            if expected is None:
                kept.append((line, fp))
        assert 0 < len(kept_lines) == len(kept) < len(fps)


def _dedup_rows(tmp_path: Path, rows: list[dict], keep_adds: int) -> tuple[dict, dict[int, dict]]:
    """``dedup`` over ``rows`` (fields title and text, one process): its counts and its report
    rows by dropped line."""
    source, kept, report = tmp_path / "in.jsonl", tmp_path / "kept.jsonl", tmp_path / "dropped.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with source.open("rb") as src, kept.open("wb") as out, report.open("wb") as rep:
        result = dedup(src, out, rep, ("title", "text"), {"bits": 64}, keep_adds=keep_adds, workers=1)
    return result.as_dict(), {d["line"]: d for d in map(json.loads, report.read_text().splitlines())}


@pytest.mark.parametrize("keep_adds", [100, 0])
def test_dedup_keeps_a_line_that_adds_to_the_kept_one(tmp_path, keep_adds):
    title, paragraphs = EN_ARTICLES["orchard"]
    text = " ".join(paragraphs[:2])
    added = (
        "Next spring the volunteers will graft cuttings of the rarest trees onto young rootstock and "
        "give them to schools in the valley. A seed bank in a disused railway tunnel already keeps "
        "pips from every variety, labelled by hand."
    )
    rows = [
        {"title": title, "text": f"Open day on 12 March 2024, 1,204 visitors. {text}"},
        {"title": title, "text": f"Open day on 19 March 2025, 1,377 visitors. {text} {added}"},  # a superset
        {"title": title, "text": f"Open day on 26 March 2025, 2,018 visitors. {text}"},  # a date and a counter
    ]
    counts, dropped = _dedup_rows(tmp_path, rows, keep_adds)
    if keep_adds:  # the superset adds a sentence: kept; the other copy adds nothing: dropped
        assert set(dropped) == {3} and dropped[3]["kept_line"] == 1 and dropped[3]["adds"] < 10
        assert counts["kept_adds"] == 1 and counts["kept"] == 2
    else:  # resemblance alone: the superset's sentence is lost
        assert set(dropped) == {2, 3} and dropped[2]["kept_line"] == 1 and dropped[2]["adds"] >= 100
        assert counts["kept_adds"] == 0 and counts["kept"] == 1


def test_dedup_finds_short_copies_that_their_fingerprints_put_beyond_k(tmp_path):
    fingerprinter = Fingerprinter()
    rows, copies = [], {}
    for _title, paragraphs in ZH_ARTICLES.values():
        for paragraph in paragraphs:
            rows.append({"title": "", "text": paragraph})
            original = len(rows)
            for copy in (
                paragraph[:20] + paragraph[21:],  # a character dropped
                paragraph + "（记者 王明）",  # a phrase added
                paragraph.replace("，", ",").replace("。", "."),  # other punctuation
            ):
                rows.append({"title": "", "text": copy})
                copies[len(rows)] = original
    distances = {
        line: (
            fingerprinter.fingerprint_text(rows[line - 1]["text"])
            ^ fingerprinter.fingerprint_text(rows[kept - 1]["text"])
        ).bit_count()
        for line, kept in copies.items()
    }
    assert sum(d > 3 for d in distances.values()) >= 3  # the fingerprint alone misses these
    for keep_adds in (100, 0):
        counts, dropped = _dedup_rows(tmp_path, rows, keep_adds)
        assert {line: d["kept_line"] for line, d in dropped.items()} == copies
        assert all(dropped[line]["distance"] == d for line, d in distances.items())
        assert counts["kept"] == len(rows) - len(copies)


def test_dedup_keeps_short_lines_that_share_a_paragraph_and_little_else(tmp_path):
    from scrapy_simhash.decision.shorttext import MIN_ALIKE, RESEMBLANCE, alike, bands, signature

    shared = ZH_ARTICLES["metro"][1][1]
    a = "今天的天气很好，我们一家人去公园散步，还看到了很多盛开的花。" + shared
    b = "这家餐厅的菜味道一般，服务也不到位，所以不会再来了。" + shared
    own_a, own_b = OwnText([a]), OwnText([b])
    adds, lacks = own_b.added(own_a.novelty_text()), own_a.added(own_b.novelty_text())
    sig_a, sig_b = signature(a), signature(b)
    assert sig_a is not None and sig_b is not None
    assert set(bands(sig_a)) & set(bands(sig_b))  # the LSH makes a a candidate for b
    assert alike(sig_a, sig_b) >= MIN_ALIKE  # ... alike enough to be measured
    assert adds < 100  # b adds little to a: by that alone, b would go
    assert 1 - (adds + lacks) / (own_a.chars + own_b.chars) < RESEMBLANCE  # but they share too little
    for keep_adds in (100, 0):
        counts, dropped = _dedup_rows(tmp_path, [{"text": a}, {"text": b}], keep_adds)
        assert dropped == {} and counts["kept"] == 2


def test_dedup_rejects_a_negative_keep_adds(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "a line"}\n')
    assert main(["dedup", str(source), "--field", "text", "--keep-adds", "-1"]) == 2
    assert "--keep-adds -1 is invalid" in capsys.readouterr().err


def test_dedup_writes_kept_lines_to_a_file_never_over_its_input(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    rows = _corpus()[0]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows * 2))
    out = tmp_path / "out.jsonl"
    assert main(["dedup", str(source), "--field", "title", "--field", "text", "-o", str(out), "--workers", "1"]) == 0
    assert out.read_text().splitlines() == [json.dumps(r) for r in rows if not r["id"].endswith("-copy")]
    assert f"dropped={len(rows) + 3}" in capsys.readouterr().err
    assert main(["dedup", str(source), "--field", "text", "-o", str(source)]) == 2
    assert "is the input file" in capsys.readouterr().err and len(source.read_text().splitlines()) == 2 * len(rows)


def test_console_door_reads_a_redis_index(redis_server, capsys):
    """``scrapy-simhash redis://...#PREFIX``: the same reports on a Redis store; a prefix with no
    index is one error line, and nothing is created there."""
    import redis

    from scrapy_simhash.store.redisstore import RedisStore

    prefix = "simhash:clitest"
    index = SimhashIndex(RedisStore(redis_server.url, prefix + ":pages"))
    tracker = ChangeTracker(index)
    fp = Fingerprinter()
    for name in ("harbour", "orchard"):
        tracker.observe(f"https://a.example/{name}", PageFingerprint.of(fp.fingerprint_html(article_html(name))))
    tracker.observe("https://mirror.example/harbour", PageFingerprint.of(fp.fingerprint_html(article_html("harbour"))))
    index.close()

    assert main([f"{redis_server.url}#{prefix}", "export"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["key"] for r in rows} == {
        "https://a.example/harbour",
        "https://a.example/orchard",
        "https://mirror.example/harbour",
    }
    assert main([f"{redis_server.url}#{prefix}:pages", "dropped", "--json"]) == 0
    dropped = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(d["key"], d["duplicate_of"]) for d in dropped] == [
        ("https://mirror.example/harbour", "https://a.example/harbour")
    ]

    assert main([f"{redis_server.url}#simhash:nobody", "info"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: there is no scrapy-simhash index under simhash:nobody:pages") and err.count("\n") == 1
    assert not redis.Redis.from_url(redis_server.url).keys("*nobody*")
    assert main([redis_server.url, "info"]) == 2  # no '#PREFIX'
    assert "name the index after '#'" in capsys.readouterr().err
    # the Scrapy door reads the store the project's settings name (SIMHASH_STORE)
    result = sh(
        sys.executable, "-m", "scrapy", "simhash", "clitest", "dropped",
        "-s", "SIMHASH_STORE=scrapy_simhash.store.RedisStore", "-s", f"SIMHASH_REDIS_URL={redis_server.url}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("https://mirror.example/harbour\thttps://a.example/harbour\t")


def test_dedup_count_of_what_a_short_line_adds_is_the_measure() -> None:
    """What the short-text rule counts a line as adding (:func:`shorttext.added`, reported as
    ``adds``) is :meth:`OwnText.added` against the kept line's exact sketch, the crawl's measure."""
    import random

    from scrapy_simhash.decision.shorttext import added

    rng = random.Random(21)
    paragraphs = [p for _, ps in {**EN_ARTICLES, **ZH_ARTICLES}.values() for p in ps]
    pieces = ["（记者 王明）", "…", "Ⅻ", "ﬁne", "2025-05-19", "a1b2c3d4e5f6", "x", "", "   ", "abcabcabcabc"]
    pairs = []
    for _ in range(300):
        kept = rng.choice(paragraphs)
        new = kept
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(new) + 1)
            new = new[:i] + rng.choice([*pieces, rng.choice(paragraphs)[:40]]) + new[i + rng.randint(0, 5) :]
        pairs.append((kept, new))
    pairs += [("short", "shorter"), ("x", "y"), ("", "abc"), ("abc", ""), ("ab" * 50, "ab" * 80)]
    for kept, new in pairs:
        assert added(new, kept) == OwnText([new]).added(OwnText([kept]).novelty_text()), (kept, new)