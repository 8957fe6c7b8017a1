"""Build the labelled page pairs of the quality benchmark from ``../shared/data`` (deterministic, seeded).

The pairs are rebuilt on the fly by ``evaluate.py`` (the full set is tens of MB, so this builder is the
record; ``--out FILE`` writes it as JSON lines anyway, ``--summary`` prints counts and a digest that
changes whenever any pair changes).

Groups and categories (``Pair.group`` / ``Pair.category``):

* ``near`` (label 1: a near-duplicate the user wants dropped)
  - ``template_swap``: one article under two different synthetic site templates (syndication);
  - ``dynamic_noise``: one page, fetched twice: dates, view/comment counters, ads, related links changed;
  - ``editorial``: a typo fixed, one sentence added, or one sentence removed;
  - ``encoding``: a real zh-web-cee page as GBK bytes and as UTF-8 bytes (meta charset says which);
  - ``width``: full-width vs half-width letters, digits and punctuation;
  - ``short_noise``: a short page (80-300 characters of text) with dynamic noise;
  - ``short_edit``: one sentence removed from a short article (the shortest articles of each
    language with at least four sentences), same template and noise;
  - ``real_swap``: a real page as downloaded (Zyte benchmark, zh-web-cee) vs its article text
    (the benchmark's ground truth) republished under one of our synthetic templates;
  - ``yanyiwu``: the real pair in ``zh-text/yanyiwu-news-pair`` (one trailing "。" added).
* ``neg`` (label 0: must not be dropped)
  - ``same_template``: all cross pairs of different articles under one template (the false-positive rate);
  - ``same_topic``: different chapters of one documentation repository (``revisions``);
  - ``short_pages``: different short pages under one template.
* ``keep`` (label 0: an update that adds content, which a drop would lose; the second page must be kept)
  - ``adds_paragraph``: an article, then the same article (same template and noise) with one paragraph
    of another article added (``meta["added"]``: its characters, at least ``ADDED_PARAGRAPH``);
  - ``adds_sentences``: an article, then the same article with three or four whole sentences of another
    article added as a paragraph, of ``ADDED_PARAGRAPH`` bytes of UTF-8 at least (40 Han characters;
    Chinese: news and web articles of ``zh-text``'s CLUECorpusSmall sample, :func:`load_clue_articles`;
    English: other articles than ``adds_paragraph``'s);
  - ``rewritten``: the same articles with 30, 40 or 50 % of their sentences replaced by another
    article's (``meta["frac"]``), same template and noise.
* ``change`` (recrawl verdict: label 1 = real edit, 0 = noise only)
  - ``rewrite_10`` .. ``rewrite_50``: 10-50 % of the text replaced by text of another article (and noise);
  - ``noise_only``: the same page with only dynamic noise changed.
* ``rev`` (real revision pairs, ``revisions/pairs.jsonl.gz``): label 1 when exact character-5-gram Jaccard
  (``jaccard5``) >= 0.9, else 0; ``meta["jaccard5"]`` keeps the value for the curve over bands, and
  ``meta["added"]`` the characters the second version adds (:func:`added_chars`): a pair that adds
  ``MUST_KEEP`` or more is one whose second version a drop would lose ("must keep").

Documents are ``Doc`` records: ``kind`` "html" (``content`` is str, or bytes for the encoding pairs) or
"text" (``content`` is the text, ``title`` its title).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html as htmllib
import itertools
import json
import random
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20261122
DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
REV_NEAR = 0.9  # revisions: near-duplicate when jaccard5 >= this
MUST_KEEP = 300  # revisions: the second version adds at least this many characters: it must be kept
ADDED_PARAGRAPH = 120  # adds_paragraph: the added paragraph has at least this many characters
ADDED_WINDOW = 16  # added_chars: a character is in the old text when a window of this many around it is


@dataclass(frozen=True)
class Doc:
    """One page or text: ``kind`` is "html" or "text"; ``content`` str (or bytes for raw pages)."""

    id: str
    kind: str
    content: str | bytes
    title: str = ""
    lang: str = "zh"


@dataclass(frozen=True)
class Pair:
    """Two documents with a label (1 = near-duplicate / changed, 0 = distinct / noise only)."""

    group: str
    category: str
    label: int
    a: str
    b: str
    meta: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass
class Article:
    key: str
    lang: str
    title: str
    paras: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.paras)


# --------------------------------------------------------------------------- data loading

_SENT_END = "。！？!?；;…」”\"'）)"


def _join_wrapped(text: str) -> list[str]:
    """zh-web-cee texts are hard-wrapped mid-sentence: glue fragments back into paragraphs."""
    out: list[str] = []
    cur = ""
    for line in (x.strip() for x in text.split("\n")):
        if not line:
            continue
        cur += line
        if cur[-1] in _SENT_END or (len(cur) > 400 and cur[-1] in "，,"):
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def _title_from_html(raw: str) -> str:
    m = re.search(r"<title[^>]*>(.*?)</title>", raw, re.DOTALL | re.IGNORECASE)
    t = htmllib.unescape(re.sub(r"\s+", " ", m.group(1))).strip() if m else ""
    # drop a site suffix so that templates can add their own
    t = re.split(r"\s+[-|–—]\s+|_|｜", t)[0].strip()
    return t[:80]


def _decode_cee(raw: bytes) -> str:
    """A zh-web-cee original page as text: the CleanEval wrapper's encoding, else UTF-8, else GB18030."""
    m = re.search(rb'<text [^>]*encoding="([^"]*)"', raw[:400])
    enc = {"utf8": "utf-8", "gb2312": "gb18030", "gbk": "gb18030"}.get(m.group(1).decode() if m else "")
    if enc is None:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("gb18030", "replace")
    return raw.decode(enc, "replace")


def load_zh_articles(data: Path = DATA) -> list[Article]:
    cleaned = json.loads((data / "zh-web-cee" / "eval" / "cleaned_ground.json").read_text("utf-8"))
    arts = []
    for uuid in sorted(cleaned):
        paras = _join_wrapped(cleaned[uuid]["articleBody"])
        if sum(map(len, paras)) < 500:
            continue
        raw = _decode_cee((data / "zh-web-cee" / "original" / f"{uuid}.html").read_bytes())
        m = re.search(r'<text [^>]*title="([^"]*)"', raw)
        title = _title_from_html(f"<title>{m.group(1)}</title>") if m else ""
        title = title or _title_from_html(raw) or paras[0][:20]
        arts.append(Article(uuid, "zh", title.strip()[:60], paras))
    return arts


def load_en_articles(data: Path = DATA) -> list[Article]:
    gt = json.loads(gzip.decompress((data / "scrapinghub-aeb" / "ground-truth.json.gz").read_bytes()))
    arts = []
    for key in sorted(gt):
        body = gt[key]["articleBody"]
        paras = [p.strip() for p in body.split("\n") if p.strip()]
        cjk = sum("\u4e00" <= c <= "\u9fff" for c in body)
        if len(body) < 1500 or cjk > 10:
            continue
        raw = gzip.decompress((data / "scrapinghub-aeb" / "html" / f"{key}.html.gz").read_bytes())
        title = _title_from_html(raw.decode("utf-8", "replace")) or paras[0][:60]
        arts.append(Article(key, "en", title, paras))
    return arts


def load_clue_articles(data: Path = DATA, n: int = 60) -> list[Article]:
    """Chinese articles of 500 to 3,000 characters (news, reviews, web posts) from the CLUECorpusSmall
    sample, mostly Han, their sentences three to a paragraph; ``n`` of them, seeded."""
    path = data / "zh-text" / "cluecorpussmall-sample" / "CLUECorpusSmall_sampled.txt.gz"
    out = []
    for i, line in enumerate(gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()):
        line = line.strip()
        if not 500 <= len(line) <= 3000 or sum("\u4e00" <= c <= "\u9fff" for c in line) < 0.6 * len(line):
            continue
        sents = [line[s:e] for _, s, e in _sentences([line], "zh")]
        if len(sents) < 8:
            continue
        paras = ["".join(sents[j : j + 3]) for j in range(0, len(sents), 3)]
        out.append(Article(f"clue{i}", "zh", re.split(r"[，。！？ ]", line)[0][:24], paras))
    random.Random(SEED + 17).shuffle(out)
    return out[:n]


def _real_page(data: Path, art: Article) -> bytes:
    """The page ``art`` was taken from, as downloaded."""
    if art.lang == "zh":
        return (data / "zh-web-cee" / "original" / f"{art.key}.html").read_bytes()
    return gzip.decompress((data / "scrapinghub-aeb" / "html" / f"{art.key}.html.gz").read_bytes())


def load_short_texts(data: Path = DATA, n: int = 50) -> list[Article]:
    path = data / "zh-text" / "cluecorpussmall-sample" / "CLUECorpusSmall_sampled.txt.gz"
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        line = line.strip()
        if 80 <= len(line) <= 300 and sum("\u4e00" <= c <= "\u9fff" for c in line) > 0.6 * len(line):
            out.append(Article(f"clue{i}", "zh", line[:18], [line]))
    rng = random.Random(SEED + 7)
    rng.shuffle(out)
    return out[:n]


def load_revisions(data: Path = DATA) -> list[dict]:
    with gzip.open(data / "revisions" / "pairs.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


_DIGIT_RUN = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def _comparable(text: str) -> str:
    return _DIGIT_RUN.sub("0", _SPACE.sub(" ", text.lower()).strip())


def added_chars(old: str, new: str) -> int:
    """How many characters ``new`` adds to ``old``: the characters of ``new`` (lower-cased, spaces
    collapsed, runs of digits masked) that no ``ADDED_WINDOW``-character window of ``old`` covers,
    in runs of ``ADDED_WINDOW`` at least (a changed word or number adds nothing). The real-site
    benchmark's content-loss judge counts lost text the same way."""
    a, b = _comparable(old), _comparable(new)
    n = ADDED_WINDOW
    have = {a[i : i + n] for i in range(len(a) - n + 1)}
    covered = bytearray(len(b))
    for i in range(len(b) - n + 1):
        if b[i : i + n] in have:
            covered[i : i + n] = b"\x01" * n
    return sum(len(run) for run in covered.replace(b"\x01", b" ").split() if len(run) >= n)


def add_paragraph(paras: list[str], rng: random.Random, donor: Article) -> tuple[list[str], int]:
    """``paras`` with one paragraph of ``donor`` (of ``ADDED_PARAGRAPH`` characters at least, the
    shortest such one when none of them is longer than 800) inserted after the first paragraph or
    later; returns the paragraphs and the added paragraph's length."""
    fits = [p for p in donor.paras if ADDED_PARAGRAPH <= len(p) <= 800]
    new = rng.choice(fits) if fits else min((p for p in donor.paras if len(p) >= ADDED_PARAGRAPH), key=len)
    at = rng.randint(1, len(paras))
    return [*paras[:at], new, *paras[at:]], len(new)


# --------------------------------------------------------------------------- site templates

_ZH_NAV = "首页 新闻 国内 国际 财经 股票 科技 体育 娱乐 汽车 房产 教育 健康 旅游 军事 文化 读书 博客 论坛 视频 图片 专题".split()
_EN_NAV = (
    "Home World U.S. Politics Business Tech Science Health Sports Entertainment Style Travel "
    "Opinion Video Podcasts Newsletters Weather Markets Climate Books"
).split()
_ZH_ADS = [
    "限时特惠！新款手机直降500元，点击抢购",
    "免费领取价值999元的英语课程，名额有限",
    "买房首付低至10万，地铁口现房热销中",
    "夏季清仓大甩卖，全场三折起包邮",
    "信用卡在线申请，最快当天下卡",
    "高薪招聘程序员，月薪两万起，五险一金",
]
_EN_ADS = [
    "Save 50% on your first year of unlimited digital access",
    "Sponsored: The one retirement trick advisors hate",
    "Shop the summer sale: up to 70% off sitewide",
    "Advertisement: Compare car insurance quotes in 2 minutes",
    "Limited offer: get 3 months of premium for $1",
    "Sponsored: These new sneakers are taking over the city",
]
_SITES = {
    "zh": [("zhportal", "环球资讯网", "table"), ("zhnews", "今日新闻中心", "div")],
    "en": [("enportal", "The Daily Ledger", "div"), ("enblog", "Northside Notes", "blog")],
}


def _noise(rng: random.Random, lang: str, titles: list[str]) -> dict:
    y, mo, d = rng.randint(2005, 2025), rng.randint(1, 12), rng.randint(1, 28)
    return {
        "date": (
            f"{y}年{mo:02d}月{d:02d}日 {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
            if lang == "zh"
            else f"{['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][mo - 1]} "
            f"{d}, {y} {rng.randint(1, 12)}:{rng.randint(0, 59):02d} PM"
        ),
        "views": rng.randint(10, 999999),
        "comments": rng.randint(0, 5000),
        "likes": rng.randint(0, 9999),
        "ad": rng.randrange(6),
        "related": rng.sample(titles, min(8, len(titles))),
        "hot": rng.sample(titles, min(10, len(titles))),
        "now": f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
    }


def _links(titles: Iterable[str], base: str) -> str:
    return "".join(f'<li><a href="/{base}/{i}.html">{htmllib.escape(t)}</a></li>' for i, t in enumerate(titles))


def render(site: tuple[str, str, str], art: Article, noise: dict, paras: list[str] | None = None) -> str:
    """Wrap an article's paragraphs in a synthetic site template with its chrome and the noise state."""
    sid, name, layout = site
    paras = art.paras if paras is None else paras
    e = htmllib.escape
    zh = art.lang == "zh"
    nav = _links(_ZH_NAV if zh else _EN_NAV, "channel")
    ads = (_ZH_ADS if zh else _EN_ADS)[noise["ad"]]
    body = "".join(f"<p>{e(p)}</p>" for p in paras)
    title = e(art.title)
    if zh:
        meta = (
            f'<div class="info">来源：{e(name)} 发布时间：{noise["date"]} 阅读：{noise["views"]}次 '
            f"评论({noise['comments']}) 点赞 {noise['likes']}</div>"
        )
        related_h, hot_h = "相关新闻", "热门排行"
        foot = (
            f"<p>关于我们 | 联系我们 | 广告服务 | 网站地图 | 免责声明 | 招聘信息</p>"
            f"<p>Copyright © 2005-2025 {e(name)} 版权所有 京ICP备05012345号 京公网安备11010502030000号</p>"
            f"<p>违法和不良信息举报电话：010-12345678 本站所刊载的信息不代表本站观点</p>"
        )
        share = "<div class=share>分享到：微博 微信 QQ空间 豆瓣 复制链接</div>"
        clock = f"<span>北京时间 {noise['now']}</span> <a href=/login>登录</a> <a href=/reg>注册</a>"
    else:
        meta = (
            f'<div class="byline">By Staff Writer | {noise["date"]} | {noise["views"]} views | '
            f"{noise['comments']} comments | {noise['likes']} likes</div>"
        )
        related_h, hot_h = "Related stories", "Most read"
        foot = (
            f"<p>About us | Contact | Advertise | Careers | Privacy Policy | Terms of Use | Cookie settings</p>"
            f"<p>© 2025 {e(name)}. All rights reserved. Reproduction without permission is prohibited.</p>"
        )
        share = "<div class=share>Share: Facebook Twitter LinkedIn Email Copy link</div>"
        clock = f"<span>Updated {noise['now']}</span> <a href=/signin>Sign in</a> <a href=/subscribe>Subscribe</a>"
    related = f'<div class="related"><h3>{related_h}</h3><ul>{_links(noise["related"], "news")}</ul></div>'
    hot = f'<div class="hot"><h3>{hot_h}</h3><ol>{_links(noise["hot"], "top")}</ol></div>'
    ad = f'<div class="ad">{e(ads)}</div>'
    head = (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title} - {e(name)}</title>'
        f'<style>.nav li{{display:inline}}</style><script>var site="{sid}";</script></head>'
    )
    if layout == "table":
        return (
            f"{head}<body><table width=960><tr><td colspan=3><b>{e(name)}</b> {clock}</td></tr>"
            f"<tr><td colspan=3><ul class=nav>{nav}</ul></td></tr>"
            f"<tr><td width=180 valign=top>{hot}{ad}</td>"
            f"<td valign=top><h1>{title}</h1>{meta}{body}{share}{related}</td>"
            f"<td width=180 valign=top>{ad}<ul>{_links(_ZH_NAV[5:15], 'special')}</ul></td></tr>"
            f"<tr><td colspan=3>{foot}</td></tr></table></body></html>"
        )
    if layout == "blog":
        return (
            f"{head}<body><header><div class=logo>{e(name)}</div>{clock}<nav><ul>{nav}</ul></nav></header>"
            f"<div class=wrap><main><div class=post><h2 class=title>{title}</h2>{meta}"
            f"<div class=entry>{body}</div>{share}</div>{related}"
            f"<div class=comments><h3>{noise['comments']} Responses</h3><p>Leave a reply. Your email address "
            f"will not be published.</p></div></main>"
            f"<aside>{hot}{ad}<div class=tags>Tags: news analysis opinion politics economy</div></aside></div>"
            f"<footer>{foot}</footer></body></html>"
        )
    return (
        f"{head}<body><div id=top>{clock}</div><div id=header><h2>{e(name)}</h2><ul class=nav>{nav}</ul></div>"
        f"<div id=main><div class=crumbs>{'首页 > 新闻 > 正文' if zh else 'Home > News > Story'}</div>"
        f"<article><h1>{title}</h1>{meta}{body}</article>{share}{ad}{related}</div>"
        f"<div id=side>{hot}</div><div id=footer>{foot}</div></body></html>"
    )


# --------------------------------------------------------------------------- edits

_FW = {c: chr(ord(c) + 0xFEE0) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"}
_HW = dict(zip("，。！？：；（）“”‘’", ",.!?:;()\"\"''"))


def to_width_variant(text: str) -> str:
    """Half-width letters/digits -> full-width; full-width (Chinese) punctuation -> half-width."""
    return "".join(_FW.get(c) or _HW.get(c) or c for c in text)


def _sentences(paras: list[str], lang: str) -> list[tuple[int, int, int]]:
    """(paragraph index, start, end) of each sentence."""
    pat = r"[^。！？!?]*[。！？!?]+[”」]?" if lang == "zh" else r"[^.!?]*[.!?]+[\"”’]?\s*"
    out = []
    for i, p in enumerate(paras):
        for m in re.finditer(pat, p):
            if len(m.group().strip()) > 5:
                out.append((i, m.start(), m.end()))
    return out


def edit_typo(paras: list[str], rng: random.Random, lang: str) -> list[str]:
    paras = list(paras)
    if lang == "zh":
        pos = [(i, j) for i, p in enumerate(paras) for j, c in enumerate(p) if "\u4e00" <= c <= "\u9fff"]
        i, j = rng.choice(pos)
        p = paras[i]
        paras[i] = p[:j] + ("的" if p[j] != "的" else "地") + p[j + 1 :]
    else:
        words = [(i, m) for i, p in enumerate(paras) for m in re.finditer(r"[A-Za-z]{5,}", p)]
        i, m = rng.choice(words)
        p, w = paras[i], m.group()
        k = rng.randrange(1, len(w) - 2)
        paras[i] = p[: m.start()] + w[:k] + w[k + 1] + w[k] + w[k + 2 :] + p[m.end() :]
    return paras


def edit_sentence(paras: list[str], rng: random.Random, lang: str, donor: Article, add: bool) -> list[str]:
    paras = list(paras)
    sents = _sentences(paras, lang)
    i, s, e = rng.choice(sents)
    if add:
        ds = _sentences(donor.paras, lang)
        di, dsn, den = rng.choice(ds)
        new = donor.paras[di][dsn:den]
        paras[i] = paras[i][:e] + new + paras[i][e:]
    else:
        paras[i] = paras[i][:s] + paras[i][e:]
        paras = [p for p in paras if p.strip()]
    return paras


def rewrite(paras: list[str], rng: random.Random, lang: str, donor: Article, frac: float) -> list[str]:
    """Replace about ``frac`` of the text (by characters, whole sentences) with sentences of ``donor``."""
    units = _sentences(paras, lang)
    total = sum(map(len, paras))
    donor_units = [donor.paras[i][s:e] for i, s, e in _sentences(donor.paras, lang)]
    order = list(range(len(units)))
    rng.shuffle(order)
    chosen, size = set(), 0
    for u in order:
        if size >= frac * total:
            break
        i, s, e = units[u]
        chosen.add(u)
        size += e - s
    repl: dict[int, list[tuple[int, int, str]]] = {}
    for u in sorted(chosen):
        i, s, e = units[u]
        repl.setdefault(i, []).append((s, e, donor_units[u % len(donor_units)]))
    out = []
    for i, p in enumerate(paras):
        for s, e, new in sorted(repl.get(i, []), reverse=True):
            p = p[:s] + new + p[e:]
        out.append(p)
    return out


# --------------------------------------------------------------------------- builder


class PairSet:
    """Documents by id plus labelled pairs."""

    def __init__(self) -> None:
        self.docs: dict[str, Doc] = {}
        self.pairs: list[Pair] = []

    def doc(self, kind: str, content: str | bytes, title: str = "", lang: str = "zh") -> str:
        raw = content if isinstance(content, bytes) else content.encode("utf-8")
        h = hashlib.sha1(kind.encode() + b"\0" + title.encode() + b"\0" + raw).hexdigest()[:16]
        self.docs.setdefault(h, Doc(h, kind, content, title, lang))
        return h

    def add(self, group: str, category: str, label: int, a: str, b: str, **meta: object) -> None:
        self.pairs.append(Pair(group, category, label, a, b, dict(meta)))

    def digest(self) -> str:
        h = hashlib.sha256()
        for p in self.pairs:
            for d in (self.docs[p.a], self.docs[p.b]):
                c = d.content if isinstance(d.content, bytes) else d.content.encode("utf-8")
                h.update(hashlib.sha1(c).digest())
            h.update(f"{p.group}|{p.category}|{p.label}|{json.dumps(p.meta, sort_keys=True)}".encode())
        return h.hexdigest()[:16]


def _with_charset(text: str, cs: str) -> str:
    """``text`` with a ``<meta http-equiv="Content-Type">`` naming ``cs`` at the start of its head."""
    tag = f'<meta http-equiv="Content-Type" content="text/html; charset={cs}">'
    if re.search(r"<head[^>]*>", text, re.IGNORECASE):
        return re.sub(r"(<head[^>]*>)", lambda mm: mm.group(1) + tag, text, count=1, flags=re.IGNORECASE)
    return tag + text


def build(data: Path = DATA, *, quick: bool = False, revisions: bool = True, seed: int = SEED) -> PairSet:
    """Build every pair. ``quick``: fewer articles and a sample of the revision pairs."""
    rng = random.Random(seed)
    ps = PairSet()
    arts = {"zh": load_zh_articles(data), "en": load_en_articles(data)}
    n_art = 12 if quick else 60
    titles = {lang: [a.title for a in arts[lang]] for lang in arts}

    def page(site, art, noise, paras=None) -> str:
        return ps.doc("html", render(site, art, noise, paras), lang=art.lang)

    for lang in ("zh", "en"):
        pool = arts[lang][:n_art] if quick else arts[lang]
        s1, s2 = _SITES[lang]
        sel = pool[:n_art]
        for k, art in enumerate(sel):
            donor = pool[(k + 7) % len(pool)]
            n1, n2 = _noise(rng, lang, titles[lang]), _noise(rng, lang, titles[lang])
            base = page(s1, art, n1)
            ps.add("near", "template_swap", 1, base, page(s2, art, n2), lang=lang, art=art.key)
            ps.add("near", "dynamic_noise", 1, base, page(s1, art, n2), lang=lang, art=art.key)
            kind = ("typo", "add", "remove")[k % 3]
            if kind == "typo":
                edited = edit_typo(art.paras, rng, lang)
            else:
                edited = edit_sentence(art.paras, rng, lang, donor, add=kind == "add")
            ps.add("near", "editorial", 1, base, page(s1, art, n1, edited), lang=lang, art=art.key, edit=kind)
            if lang == "zh":
                wide = [to_width_variant(p) for p in art.paras]
                ps.add("near", "width", 1, base, page(s1, art, n1, wide), lang=lang, art=art.key)
        # hard negatives: all cross pairs of different articles under one template
        for site in (s1, s2):
            ids = [page(site, a, _noise(rng, lang, titles[lang])) for a in pool]
            for i, j in itertools.combinations(range(len(ids)), 2):
                ps.add("neg", "same_template", 0, ids[i], ids[j], lang=lang, site=site[0])
        # change verdict: rewrites vs noise only
        nch = 8 if quick else 40
        for k, art in enumerate(pool[:nch]):
            donor = pool[(k + 11) % len(pool)]
            n0 = _noise(rng, lang, titles[lang])
            base = page(s1, art, n0)
            for frac in (0.1, 0.2, 0.3, 0.4, 0.5):
                paras = rewrite(art.paras, rng, lang, donor, frac)
                ps.add(
                    "change",
                    f"rewrite_{int(frac * 100)}",
                    1,
                    base,
                    page(s1, art, _noise(rng, lang, titles[lang]), paras),
                    lang=lang,
                    art=art.key,
                )
                ps.add(
                    "change",
                    "noise_only",
                    0,
                    base,
                    page(s1, art, _noise(rng, lang, titles[lang])),
                    lang=lang,
                    art=art.key,
                )

    # encoding: real pages, GBK bytes vs UTF-8 bytes
    cee = data / "zh-web-cee" / "original"
    for path in sorted(cee.glob("*.html"))[: 12 if quick else None]:
        text = _decode_cee(path.read_bytes())
        text = re.sub(r"^\s*<text [^>]*>", "", text)
        text = re.sub(r"</text>\s*$", "", text)
        text = re.sub(r"<meta[^>]*charset[^>]*>", "", text, flags=re.IGNORECASE)
        gbk = _with_charset(text, "gbk").encode("gbk", "xmlcharrefreplace")
        utf = _with_charset(text, "utf-8").encode("utf-8")
        ps.add("near", "encoding", 1, ps.doc("html", gbk), ps.doc("html", utf), lang="zh", page=path.stem)

    # short pages: near-duplicates (noise) and hard negatives (different short texts, one template)
    shorts = load_short_texts(data, 16 if quick else 50)
    site = _SITES["zh"][1]
    sids = []
    for art in shorts:
        n1, n2 = _noise(rng, "zh", titles["zh"]), _noise(rng, "zh", titles["zh"])
        a = page(site, art, n1)
        sids.append(a)
        ps.add("near", "short_noise", 1, a, page(site, art, n2), lang="zh", art=art.key)
    for i, j in itertools.combinations(range(len(sids)), 2):
        ps.add("neg", "short_pages", 0, sids[i], sids[j], lang="zh")

    # one sentence removed from a short article; a real page vs its text under another template
    rng2 = random.Random(seed + 11)  # its own stream: the pairs above stay as they were
    n_short = 8 if quick else 30
    for lang in ("zh", "en"):
        pool = [a for a in arts[lang] if len(_sentences(a.paras, lang)) >= 4]
        pool.sort(key=lambda a: (sum(map(len, a.paras)), a.key))
        site = _SITES[lang][0]
        for art in pool[:n_short]:
            noise = _noise(rng2, lang, titles[lang])
            edited = edit_sentence(art.paras, rng2, lang, art, add=False)
            ps.add(
                "near", "short_edit", 1, page(site, art, noise), page(site, art, noise, edited), lang=lang, art=art.key
            )
    n_real = 8 if quick else 40
    for lang in ("zh", "en"):
        site = _SITES[lang][1]
        for art in arts[lang][:: max(1, len(arts[lang]) // n_real)][:n_real]:
            raw = _real_page(data, art)
            republished = page(site, art, _noise(rng2, lang, titles[lang]))
            ps.add("near", "real_swap", 1, ps.doc("html", raw, lang=lang), republished, lang=lang, art=art.key)

    # an update that adds a paragraph: must be kept
    rng3 = random.Random(seed + 13)  # its own stream again
    n_add = 12 if quick else 60
    for lang in ("zh", "en"):
        pool = arts[lang]
        site = _SITES[lang][0]
        donors = [a for a in pool if any(len(p) >= ADDED_PARAGRAPH for p in a.paras)]
        for k, art in enumerate(pool[:n_add]):
            donor = next(d for d in donors[k + 1 :] + donors if d.key != art.key)
            noise = _noise(rng3, lang, titles[lang])
            paras, added = add_paragraph(art.paras, rng3, donor)
            a, b = page(site, art, noise), page(site, art, noise, paras)
            ps.add("keep", "adds_paragraph", 0, a, b, lang=lang, art=art.key, added=added)

    # updates a drop would lose: three or four sentences of another article added, 30-50 % rewritten
    rng4 = random.Random(seed + 17)  # its own stream again
    n_new = 12 if quick else 60
    pools = {"zh": load_clue_articles(data, n_new), "en": arts["en"][::-1][:n_new]}
    for lang, pool in pools.items():
        site = _SITES[lang][1]
        for k, art in enumerate(pool):
            donor = pool[(k + 5) % len(pool)]
            noise = _noise(rng4, lang, titles[lang])
            base = page(site, art, noise)
            sents = [donor.paras[i][s:e].strip() for i, s, e in _sentences(donor.paras, lang)]
            size, sep = 3 + k % 2, "" if lang == "zh" else " "
            runs = [sep.join(sents[i : i + size]) for i in range(max(1, len(sents) - size + 1))]
            fits = [run for run in runs if len(run.encode()) >= ADDED_PARAGRAPH]  # UTF-8: a Han character 3
            new = rng4.choice(fits) if fits else max(runs, key=len)
            at = rng4.randint(1, len(art.paras))
            paras = [*art.paras[:at], new, *art.paras[at:]]
            ps.add("keep", "adds_sentences", 0, base, page(site, art, noise, paras), lang=lang, art=art.key, added=len(new))
            frac = (0.3, 0.4, 0.5)[k % 3]
            paras = rewrite(art.paras, rng4, lang, donor, frac)
            ps.add("keep", "rewritten", 0, base, page(site, art, noise, paras), lang=lang, art=art.key, frac=frac)

    # the real pair
    yan = data / "zh-text" / "yanyiwu-news-pair"
    a = ps.doc("text", (yan / "news_content.3.txt").read_text("utf-8"), lang="zh")
    b = ps.doc("text", (yan / "news_content.4.txt").read_text("utf-8"), lang="zh")
    ps.add("near", "yanyiwu", 1, a, b, lang="zh")

    if revisions:
        revs = load_revisions(data)
        # same topic: the newest version of different chapters of one repo
        latest: dict[tuple[str, str], tuple[str, str]] = {}
        for r in revs:
            key = (r["repo"], r["path"])
            if key not in latest or r["date_b"] > latest[key][0]:
                latest[key] = (r["date_b"], r["text_b"])
        by_repo: dict[str, list[str]] = {}
        for (repo, _doc), (_, text) in sorted(latest.items()):
            by_repo.setdefault(repo, []).append(text)
        for repo, texts in sorted(by_repo.items()):
            lang = "en" if repo == "rust-lang/book" else "zh"
            combos = list(itertools.combinations(range(len(texts)), 2))
            for i, j in rng.sample(combos, min(40 if quick else 200, len(combos))):
                ps.add(
                    "neg",
                    "same_topic",
                    0,
                    ps.doc("text", texts[i], lang=lang),
                    ps.doc("text", texts[j], lang=lang),
                    lang=lang,
                    repo=repo,
                )
        if quick:
            revs = random.Random(seed + 1).sample(revs, 300)
        for r in revs:
            j5 = r["jaccard5"]
            ps.add(
                "rev",
                "revisions",
                int(j5 >= REV_NEAR),
                ps.doc("text", r["text_a"], lang=r["lang"]),
                ps.doc("text", r["text_b"], lang=r["lang"]),
                lang=r["lang"],
                jaccard5=j5,
                repo=r["repo"],
                added=added_chars(r["text_a"], r["text_b"]),
            )
    return ps


def summary(ps: PairSet) -> str:
    from collections import Counter

    c = Counter((p.group, p.category, p.label) for p in ps.pairs)
    lines = [f"{g:7} {cat:15} label={lab}: {n}" for (g, cat, lab), n in sorted(c.items())]
    lines.append(f"{len(ps.pairs)} pairs, {len(ps.docs)} documents, digest {ps.digest()}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small subset")
    ap.add_argument("--out", type=Path, help="write pairs (with both documents) as JSON lines here")
    args = ap.parse_args(argv)
    ps = build(quick=args.quick)
    print(summary(ps))
    if args.out:
        with args.out.open("w", encoding="utf-8") as f:
            for p in ps.pairs:
                row = {"group": p.group, "category": p.category, "label": p.label, "meta": p.meta}
                for side, i in (("a", p.a), ("b", p.b)):
                    d = ps.docs[i]
                    if isinstance(d.content, bytes):
                        row[side] = {"kind": d.kind, "bytes_latin1": d.content.decode("latin-1")}
                    else:
                        row[side] = {"kind": d.kind, "content": d.content, "title": d.title}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
