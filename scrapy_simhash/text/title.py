"""A page's title: its ``<title>``, else its ``og:title`` / ``twitter:title``, else its first
``<h1>``; the site's name and the separators around it cut off where the page's headings show
which part is the page's own (:func:`clean_title`). With it, the page's main heading, which the
content region widens to (:func:`title_and_heading`)."""

from __future__ import annotations

import re
from typing import Any

from scrapy_simhash.text.blocks import CJK, WS_RE, fold, heading_text, weight

# " - ", " | ", " :: ", "--", "——", "|", a bare "-" between Han characters ("新闻-搜狐"), and "_"
# beside a space or a character outside ASCII ("新闻_搜狐", "iPhone15_新浪"), not inside an ASCII
# identifier ("CMAKE_BUILD_TYPE — CMake" is "CMAKE_BUILD_TYPE", not "CMAKE").
_TITLE_SEP_RE = re.compile(
    rf"\s+[-|–—·:»«]{{1,2}}\s+|\s*(?:-{{2,}}|——|[|｜])\s*|(?<=[{CJK}])-(?=[{CJK}])"
    r"|\s+_{1,2}\s*|_{1,2}\s+|(?<=[^\x00-\x7f])_{1,2}\s*|_{1,2}(?=[^\x00-\x7f])"
)


def clean_title(title: str, headings: list[str] = ()) -> str:  # type: ignore[assignment]
    """The page's own title: of the parts of ``title`` (split at " - ", " | ", " — ", "_"...),
    the first that a heading of the page repeats ("Foo — Django 3.2 documentation" with <h1>Foo</h1>:
    "Foo", not the site name, also when the site's name is a heading too, as mdBook's menu title
    is; a part under 4 characters as a whole word: "u64 - Rust" with <h1>Primitive Type u64</h1>,
    only where no longer part is repeated: "A - Keywords - Book" with <h2>Appendix A: Keywords</h2>
    is "Keywords"), else the heaviest one."""
    title = WS_RE.sub(" ", title).strip()
    parts = [p.strip() for p in _TITLE_SEP_RE.split(title)]
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return title
    repeated = [part for part in parts if any(_repeats(part.casefold(), heading) for heading in headings)]
    if repeated:  # the first, a part of 4 characters or more before a shorter one ("A - Keywords")
        return next((part for part in repeated if len(part) >= 4), repeated[0])
    return max(parts, key=lambda part: weight(fold(part)))  # first of equals: max() keeps the first maximum


def _repeats(part: str, heading: str) -> bool:
    """Whether a case-folded title part and heading say the same: equal, one inside the other
    (4 characters or more), or a shorter part a whole word of the heading."""
    if len(part) >= 4:
        return part in heading or heading in part
    return part == heading or re.search(rf"(?<!\w){re.escape(part)}(?!\w)", heading) is not None


def _headings(root: Any) -> list[str]:
    """The first <h1> (else <h2>) texts of the page's first <main>, else of the whole page,
    case-folded, without permalink signs: the page's own headings, not a header's site name
    (mdBook's menu-bar <h1>, a theme's site-title <h1> above an <h2> article title)."""
    # (one pass over the tree for the first <main> and the page's <h1> and <h2>)
    main = None
    found: dict[str, list[Any]] = {"h1": [], "h2": []}
    for el in root.iter("main", "h1", "h2"):
        if el.tag == "main":
            main = el if main is None else main
        else:
            found[el.tag].append(el)
    return (_first_headings(main) if main is not None else None) or _first_headings(root, found)


def _first_headings(root: Any, found: dict[str, list[Any]] | None = None) -> list[str]:
    """The first <h1> (else <h2>) texts below ``root`` (``found``: its <h1> and <h2>, in order)."""
    out = []
    for tag in ("h1", "h2"):
        for el in root.iter(tag) if found is None else found[tag]:
            text = heading_text("".join(el.itertext()))
            if text:
                out.append(text)
            if len(out) >= 3:
                break
        if out:
            break
    return out


def title_and_heading(root: Any) -> tuple[str, str, bool]:
    """The page's title, its main heading and whether the title names it.

    The title is the page's <title>, else its og:title / twitter:title (cut where its headings
    show which part is the page's own: :func:`clean_title`), else its first <h1>. The main
    heading is the first of the page's own headings (:func:`_headings`: case-folded, without
    permalink signs) that the title names (:func:`_names`: SQLite's "Enable Or Disable Extended
    Result Codes" <h2> below its "SQLite C Interface" <h2>), else the first that shares a word
    with it (Javadoc's "Class CharSet" under "CharSet (Apache Commons Lang 3.12.0 API)"), else
    "": a heading that has nothing of the title (a site's name in its page header) is not the
    page's."""
    headings = _headings(root)
    title = _find_title(root, headings)
    named = next((h for h in headings if h and _names(title, h)), None)
    if named is not None:
        return title, named, True
    words = set(_WORD_RE.findall(title.casefold()))
    related = next((h for h in headings if words.intersection(_WORD_RE.findall(h))), "")
    return title, related, False


def _names(title: str, heading: str) -> bool:
    """Whether ``title`` names the case-folded ``heading``: their letters the same, or those of
    one inside the other's (4 or more; digits left out: a section or version number, which a copy
    may have otherwise, names nothing): "Gtk.FlowBox" names "gtkflowbox"; "CharSet
    (Apache Commons Lang 3.12.0 API)" does not name "class charset", nor "EscapeUnicode in
    std::str" "struct std::str::escapeunicode"."""
    a, b = _NOT_LETTERS_RE.sub("", title.casefold()), _NOT_LETTERS_RE.sub("", heading)
    if len(a) < 4 or len(b) < 4:
        return a == b
    return a in b or b in a


# What :func:`_names` leaves out of a title and a heading: all but letters.
_NOT_LETTERS_RE = re.compile(r"[\W_\d]+")


# A word a title and a heading can share: 3 or more letters ("std", not "in"; not a number).
_WORD_RE = re.compile(r"[^\W_\d]{3,}")


def _find_title(root: Any, headings: list[str]) -> str:
    for el in root.iter("title"):
        text = "".join(el.itertext())
        if text.strip():
            return clean_title(text, headings)
        break
    for el in root.iter("meta"):
        if (el.get("property") or el.get("name") or "").lower() in ("og:title", "twitter:title"):
            content = el.get("content")
            if content and content.strip():
                return clean_title(content, headings)
    for el in root.iter("h1"):
        text = "".join(el.itertext())
        if text.strip():
            return WS_RE.sub(" ", text).strip()
    return ""
