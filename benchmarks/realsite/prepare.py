"""Builds the served copy of one real site: the first pages in breadth-first order from its start
page, plus the true duplicates that real sites have, and the scripted edits made between crawls.

Nothing here imports scrapy_simhash: the site and the edits do not depend on the code under test.

Duplicates added (each group: an original page and its copies; the crawl should keep one page per
group and drop the rest):

- ``mirror``: the page's bytes under ``/mirror/<path>`` (a mirror of part of the site);
- ``print``: a print view under ``/print/<path>``: the page without its navigation, header, footer
  and sidebars, plus a "printed from" line;
- ``tracking``: the page's URL with ``utm_*`` tracking parameters (the server ignores the query);
- ``soft404``: URLs that do not exist, answered with status 200 and one "not found" page in the
  site's own template (one group for the whole site).

For each of the first three kinds, one page in thirty (not the start page) gets a copy; there is
one soft-404 URL per forty pages (at least three). The start page links to the mirrored pages, an
original to its print view and tracking URL, and a few pages have broken links to the soft-404 URLs.
Links are inserted before ``</body>`` so that the rest of the page keeps its bytes.
"""

from __future__ import annotations

import random
import re
import shutil
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urljoin, urlsplit

from judge import (  # benchmarks/realsite is on sys.path (not a package)
    CHROME_NAMES,
    CHROME_ROLES,
    CHROME_TAGS,
    collapse,
    decode,
    parse,
    visible_text,
)
from lxml import html as lxml_html
from w3lib.encoding import html_to_unicode

PAGE_SUFFIXES = (".html", ".htm")
BASE = "http://site.invalid/"  # resolves links between paths; never fetched
PRINTED_FROM = "Printed from "  # the line a print view adds, before its page's URL path
SOFT404_FILE = "_soft404.html"  # the soft-404 page, kept beside (not inside) the served tree
SOFT404_TEXT = (
    "Page not found. Sorry, the page you are looking for does not exist, has been removed, or had "
    "its name changed. Please check the address, go back to the home page, or use the search box "
    "to find what you were looking for."
)
_CONTENT_SHARE = 0.7
#: A block whose own text is at least this much link text is navigation, no text block to edit.
_LINK_SHARE = 0.5
_BLOCKS = (
    *("p", "li", "pre", "dd", "dt", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote"),
    *("div", "section", "article", "table", "tr", "ul", "ol", "dl", "caption", "figcaption", "address"),
)
# An entity (kept), a Han run, a number or a word, as the README's token rules have them (written
# out here, not imported: the edits must not depend on the code under test). Only a number's digits
# are edited (a run of letters and digits that starts with a digit: 2026-11-23, 3rd, 12px), never a
# word's (u64, sha256, v1, x86_64, MFD_HUGE_64KB, _000 in 100_000: a word goes on over "_", and
# may start with one): those are content.
_ENTITY_OR_TOKEN = re.compile(
    r"(?P<entity>&#?\w+;)|[\u4e00-\u9fd5]+|(?P<num>\d(?:[^\W_\u4e00-\u9fd5]|[.,:/\-]\d)*)|[^\W\d][^\W\u4e00-\u9fd5]*"
)
# A number's digit runs that are no name's: not right after a letter or "_" (0u128, 0x4a: the
# type suffix and the hexadecimal digits are left as they are) ...
_NUMBER_DIGITS = re.compile(r"(?<!\w)\d+")
# ... and a year stays a year (1900-2099: a page says a line is a date by its year; "May 42,
# 5356" is no date, and its line would become the page's text): only its last two digits move.
_YEAR = re.compile(r"(?:19|20)\d\d")
_DIGIT = re.compile(r"\d")
_LAST_WORD = re.compile(r"\S*$")
_TAG_OR_TEXT = re.compile(r"(<[^>]*>)|([^<]+)", re.DOTALL)
_END_BODY = re.compile(rb"</body\s*>", re.IGNORECASE)
_HEAD_START = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
_CHARSET = re.compile(r"<meta\b[^>]*charset", re.IGNORECASE)


@dataclass
class Page:
    """A served URL: ``path`` (unquoted, no leading slash) and ``query`` (may be empty)."""

    path: str
    query: str = ""
    kind: str = "page"  # page, mirror, print, tracking, soft404
    group: str | None = None  # the injected duplicate group, None for the site's own pages
    edit: str | None = None  # None, "big" or "digits" (edited before the second crawl)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.path + ("?" + self.query if self.query else "")

    @property
    def url_path(self) -> str:
        return "/" + quote(self.path) + ("?" + self.query if self.query else "")


def link_key(base_url: str, href: str) -> str | None:
    """``path[?query]`` (unquoted path, no leading slash) of a link on the site, or None for a link
    that leaves it or has no path."""
    href = href.strip()
    if not href or href.startswith(("mailto:", "javascript:", "data:", "#")):
        return None
    parts = urlsplit(urljoin(base_url, href))
    base = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or parts.netloc != base.netloc:
        return None
    path = unquote(parts.path).lstrip("/")
    if not path or path.endswith("/"):
        path += "index.html"
    return path + ("?" + parts.query if parts.query else "")


def hrefs(root: Any) -> list[str]:
    return [a.get("href") for a in root.iter("a") if a.get("href")] if root is not None else []


def select_pages(src: Path, start: str, max_pages: int, include: str | None = None) -> list[str]:
    """The first ``max_pages`` HTML files of ``src`` in breadth-first link order from ``start``
    (paths relative to ``src``); ``include``: a regex the path must match."""
    pattern = re.compile(include) if include else None
    order = [start]
    seen = {start}
    queue = deque([start])
    while queue and len(order) < max_pages:
        rel = queue.popleft()
        root = parse(decode((src / rel).read_bytes()))
        for href in hrefs(root):
            key = link_key(BASE + quote(rel), href)
            if key is None or "?" in key or key in seen:
                continue
            seen.add(key)
            if not key.endswith(PAGE_SUFFIXES) or (pattern and not pattern.search(key)):
                continue
            target = src / key
            if ".." in Path(key).parts or not target.is_file():
                continue
            order.append(key)
            queue.append(key)
            if len(order) >= max_pages:
                break
    return order


def _is_chrome(el: Any) -> bool:
    """Navigation, header, footer, sidebar and the like, by tag, role, class or id."""
    names = (el.get("class") or "") + " " + (el.get("id") or "")
    return el.tag in CHROME_TAGS or (el.get("role") or "") in CHROME_ROLES or bool(CHROME_NAMES.search(names))


def main_container(root: Any) -> Any:
    """The content area: the element marked as such (``role="main"``, ``<main>``), else the deepest
    element that holds most (``_CONTENT_SHARE``) of the page's text outside navigation, headers,
    footers and sidebars."""
    marked = root.xpath("//*[@role='main'] | //main")
    if marked:
        return marked[0]
    body = root.find("body")
    node = body if body is not None else root
    chrome = sum(len(collapse(el.text_content())) for el in _outer_chrome(node))
    total = len(collapse(node.text_content())) - chrome
    while True:
        sizes = [
            (len(collapse(child.text_content())), child)
            for child in node
            if isinstance(child.tag, str) and not _is_chrome(child)
        ]
        size, best = max(sizes, key=lambda s: s[0], default=(0, None))
        if best is None or size == 0 or size < _CONTENT_SHARE * total:
            return node
        node = best


def _outer_chrome(node: Any) -> list[Any]:
    """The chrome elements under ``node`` that are not inside another one."""
    found = []
    for child in node:
        if not isinstance(child.tag, str):
            continue
        if _is_chrome(child):
            found.append(child)
        else:
            found.extend(_outer_chrome(child))
    return found


def _insert_links(path: Path, links: list[tuple[str, str]]) -> None:
    html = "".join(f'<a href="{href}">{text}</a> ' for href, text in links)
    block = f'\n<p class="share-links">{html}</p>\n'.encode("ascii")
    data = path.read_bytes()
    ends = list(_END_BODY.finditer(data))
    if ends:
        at = ends[-1].start()
        path.write_bytes(data[:at] + block + data[at:])
    else:
        path.write_bytes(data + block)


def write_tree(path: Path, root: Any, encoding: str) -> None:
    """``root`` written in ``encoding``, with a ``<meta charset>`` saying so where none is left
    (libxml2's serializer drops ``<meta http-equiv="Content-Type">``: an EUC-KR page would be
    served without its charset, and read as another)."""
    text = lxml_html.tostring(root, encoding="unicode", doctype="<!DOCTYPE html>")
    head = _HEAD_START.search(text)
    if head is not None and not _CHARSET.search(text, 0, text.find("</head>", head.end())):
        text = f'{text[: head.end()]}<meta charset="{encoding}">{text[head.end() :]}'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding, errors="xmlcharrefreplace"))


def _encoding(body: bytes) -> str:
    return html_to_unicode(None, body)[0]


def print_view(body: bytes, url: str) -> tuple[Any, str]:
    """The page without the site's navigation, header, footer and sidebars (elements outside the
    content area), with a "printed from" line."""
    root = parse(decode(body))
    box = main_container(root)
    keep = set(box.iterancestors()) | set(box.iter())  # the references keep lxml's proxies alive
    for el in list(root.iter()):
        if el in keep or not isinstance(el.tag, str) or el.getparent() is None:
            continue
        if el.tag in ("script", "style", "form") or _is_chrome(el):
            el.drop_tree()
    body_el = root.find("body")
    if body_el is not None:
        body_el.append(lxml_html.fromstring(f"<p>{PRINTED_FROM}{url}</p>"))
    return root, _encoding(body)


def soft404_page(start_body: bytes) -> bytes:
    """The "not found" page in the site's template: the start page with its content area replaced."""
    root = parse(decode(start_body))
    box = main_container(root)
    for child in list(box):
        box.remove(child)
    box.text = None
    box.append(lxml_html.fromstring(f"<div><h1>Page not found</h1><p>{SOFT404_TEXT}</p></div>"))
    title = root.find(".//title")
    if title is not None:
        title.text = "Page not found"
    return lxml_html.tostring(root, encoding="utf-8", doctype="<!DOCTYPE html>")


def _own_text(el: Any) -> str:
    """The text of ``el`` outside its block descendants."""
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str) and child.tag not in _BLOCKS:
            parts.append(child.text_content())
        parts.append(child.tail or "")
    return collapse("".join(parts))


def _link_share(el: Any) -> float:
    """The share of ``el``'s own text (:func:`_own_text`) that is the text of links."""
    own = _own_text(el)
    if not own:
        return 0.0
    links = sum(
        len(collapse(a.text_content()))
        for child in el
        if isinstance(child.tag, str) and child.tag not in _BLOCKS
        for a in ([child] if child.tag == "a" else child.iter("a"))
    )
    return min(1.0, links / len(own))


def text_blocks(root: Any) -> list[Any]:
    """The text blocks of the content area: block elements (paragraphs, items, code, cells,
    headings, divisions) with text of their own, outside their block descendants, that are not
    mostly links (a table of contents that the content area holds, a glossary's list of entries:
    deleting those changes no content)."""
    return [el for el in main_container(root).iter(*_BLOCKS) if _own_text(el) and _link_share(el) < _LINK_SHARE]


def delete_blocks(path: Path, share: float, rng: random.Random) -> dict[str, Any]:
    """Deletes text blocks at random (a block inside a deleted one goes with it) until ``share`` of
    the blocks and at least a third of their text are gone; returns how much went."""
    body = path.read_bytes()
    root = parse(decode(body))
    before = len(visible_text(parse(decode(body))))
    blocks = text_blocks(root)
    size = {b: len(_own_text(b)) for b in blocks}
    total = sum(size.values())
    order = list(blocks)
    rng.shuffle(order)
    cut: list[Any] = []
    gone: set[Any] = set()
    gone_text = 0
    for el in order:
        if len(gone) >= max(len(blocks) / 3, share * len(blocks)) and 3 * gone_text >= total:
            break
        if el not in gone:
            cut.append(el)
            for b in el.iter(*_BLOCKS):
                if b in size and b not in gone:
                    gone.add(b)
                    gone_text += size[b]
    for el in cut:
        el.drop_tree()
    write_tree(path, root, _encoding(body))
    after = len(visible_text(parse(decode(path.read_bytes()))))
    return {"blocks": len(blocks), "deleted": len(gone), "text_before": before, "text_after": after}


def shift_digits(path: Path) -> dict[str, Any]:
    """Changes every digit of the page's numbers (not its markup, scripts or entities, nor the
    digits of words such as ``u64`` or ``x86_64``, nor those right after a letter inside a number,
    ``0u128``, which are content; a year's first two): dates, counters, version and line numbers
    move, nothing else does. Tags are taken to join text (``-v<code>1.2</code>`` renders as the word
    ``v1`` and a number): a run of letters and digits that goes on from the text before a tag is
    left as it is."""
    body = path.read_bytes()
    encoding = _encoding(body)
    text = body.decode(encoding, errors="surrogateescape")
    out = []
    changed = 0
    skip_until: str | None = None
    before = ""  # the text since the last whitespace, across tags
    for m in _TAG_OR_TEXT.finditer(text):
        tag, chunk = m.group(1), m.group(2)
        if tag is not None:
            out.append(tag)
            low = tag.lower()
            if skip_until and low.startswith(skip_until):
                skip_until = None
            elif low.startswith(("<script", "<style")) and not low.endswith("/>"):
                skip_until = "</" + low[1:].split()[0].rstrip(">")
            continue
        if skip_until:
            out.append(chunk)
            continue

        def swap(d: re.Match[str]) -> str:
            nonlocal changed
            changed += 1
            return str((int(d.group()) + 3) % 10)

        def shift(run: re.Match[str]) -> str:
            digits = run.group()
            keep = 2 if _YEAR.fullmatch(digits) else 0
            return digits[:keep] + _DIGIT.sub(swap, digits[keep:])

        joined = before + chunk
        at = len(before)
        for t in _ENTITY_OR_TOKEN.finditer(joined):
            if t.end() <= at:
                continue
            if t.start() >= at and t.group("num"):  # a number of its own, not one going on
                out.append(joined[at : t.start()] + _NUMBER_DIGITS.sub(shift, t.group()))
                at = t.end()
        out.append(joined[at:])
        before = _LAST_WORD.search(joined).group()[-200:]  # type: ignore[union-attr]
    path.write_bytes("".join(out).encode(encoding, errors="surrogateescape"))
    return {"digits": changed}


def count_digits(body: bytes) -> int:
    """Digits of the numbers of the page's visible text (what ``shift_digits`` edits)."""
    return sum(
        len(run.group()) - (2 if _YEAR.fullmatch(run.group()) else 0)
        for m in _ENTITY_OR_TOKEN.finditer(visible_text(parse(decode(body))))
        if m.group("num")
        for run in _NUMBER_DIGITS.finditer(m.group())
    )


def build(
    src: Path,
    start: str,
    dest: Path,
    max_pages: int,
    include: str | None = None,
    seed: int = 7,
) -> list[Page]:
    """Copies the selected pages of ``src`` to ``dest`` and adds the duplicates; returns every served
    URL (the site's pages first, in crawl order from ``start``)."""
    rng = random.Random(seed)
    rels = select_pages(src, start, max_pages, include)
    pages = [Page(rel) for rel in rels]
    for rel in rels:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile((src / rel).resolve(), dest / rel)
    (dest.parent / SOFT404_FILE).write_bytes(soft404_page((dest / start).read_bytes()))

    per_kind = max(1, len(rels) // 30)
    candidates = rels[1:]
    originals = rng.sample(candidates, min(len(candidates), 3 * per_kind))
    kinds = ["mirror", "print", "tracking"]
    injected: list[Page] = []
    links: dict[str, list[tuple[str, str]]] = {}
    mirrors: list[tuple[str, str]] = []
    for i, rel in enumerate(originals):
        kind = kinds[i % 3]
        group = f"{kind}:{rel}"
        next(p for p in pages if p.path == rel).group = group
        if kind == "mirror":  # copied once every link is in: a mirror holds the page as it is served
            copy = Page("mirror/" + rel, kind=kind, group=group)
            mirrors.append((rel, copy.path))
            links.setdefault(rels[0], []).append((copy.url_path, "Mirror"))
        elif kind == "print":
            copy = Page("print/" + rel, kind=kind, group=group)
            root, encoding = print_view((dest / rel).read_bytes(), "/" + quote(rel))
            write_tree(dest / copy.path, root, encoding)
            links.setdefault(rel, []).append((copy.url_path, "Print this page"))
        else:
            copy = Page(rel, f"utm_source=newsletter&utm_medium=email&utm_campaign=c{i}", kind=kind, group=group)
            links.setdefault(rel, []).append((copy.url_path, "Share"))
        injected.append(copy)

    n_soft = max(3, len(rels) // 40)
    for i in range(n_soft):
        on = rels[(i * 7) % len(rels)]
        folder = str(Path(on).parent) if "/" in on else ""
        name = f"{folder}/old-page-{i}.html" if folder else f"old-page-{i}.html"
        if (dest / name).exists():
            continue
        missing = Page(name, kind="soft404", group="soft404")
        injected.append(missing)
        links.setdefault(on, []).append((missing.url_path, f"Old page {i}"))
    for rel, page_links in links.items():
        _insert_links(dest / rel, page_links)
    for rel, path in mirrors:
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(dest / rel, dest / path)
    return pages + injected


def plan_edits(dest: Path, pages: list[Page], seed: int = 7) -> None:
    """Marks the pages that :func:`apply_edits` will edit: for each kind of edit, one page per twenty
    served URLs (at least two), among the site's own pages other than the start page and the pages
    of the duplicate groups. Big edits need six text blocks, digit edits five digits."""
    rng = random.Random(seed + 1)
    own = [p for p in pages[1:] if p.kind == "page" and p.group is None]
    n = max(2, len(pages) // 20)
    big = [p for p in own if len(text_blocks(parse(decode((dest / p.path).read_bytes())))) >= 6]
    for p in rng.sample(big, min(n, len(big))):
        p.edit = "big"
    digits = [p for p in own if p.edit is None and count_digits((dest / p.path).read_bytes()) >= 5]
    for p in rng.sample(digits, min(n, len(digits))):
        p.edit = "digits"


def apply_edits(dest: Path, pages: list[Page], share: float = 0.4, seed: int = 7) -> None:
    """Edits the served copy between the two crawls (see :func:`plan_edits`)."""
    rng = random.Random(seed + 2)
    for p in pages:
        if p.edit == "big":
            p.info.update(delete_blocks(dest / p.path, share, rng))
        elif p.edit == "digits":
            p.info.update(shift_digits(dest / p.path))
