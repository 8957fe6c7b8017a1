"""The native counterparts of the text layer, each chosen here once (the Python code of
:mod:`~scrapy_simhash.text.blocks` and :mod:`~scrapy_simhash.text.flat` is the reference and the
fallback): the walk over lxml's tree (``HtmlWalker``, on the lxml / libxml2 families in
:data:`HTML_VERIFIED` only; which walk ran is counted in :data:`HTML_WALKS`), and the
regular-expression fallback (``FlatText``). :mod:`scrapy_simhash._native` makes them from the
rules of :mod:`~scrapy_simhash.text.rules`, passed here."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

from lxml import etree
from lxml.html import HtmlElement

from scrapy_simhash import _native
from scrapy_simhash.text import rules
from scrapy_simhash.text.blocks import Block, Budget, Walker
from scrapy_simhash.text.region import is_boilerplate, is_meta_text

#: (lxml major version, libxml2 major version) families whose struct layouts the native walk reads
#: (lxml's public ``struct LxmlElement``: ``PyObject_HEAD``, ``_doc``, ``_c_node``, unchanged since
#: lxml 2; libxml2's ``xmlNode`` / ``xmlAttr``, public ABI, stable within libxml2 2.x). Checked
#: against the headers of lxml 6.1.3 (libxml2 2.14.6), and the differential tests
#: (``tests/text/test_native_html.py``) run on whatever pair is installed, in CI on every push. Every
#: call also checks that the element's node points back to it (``_private``). On any other family
#: the Python walk runs. A family, not a release: a patch release of lxml must not turn the walk off.
HTML_VERIFIED = frozenset({(5, 2), (6, 2)})


#: Pages walked natively ("native") and by Python, with the reason ("python: <why>").
HTML_WALKS: Counter[str] = Counter()


#: The element classes the native walk reads, one ``HtmlWalker`` each (it checks the exact class):
#: lxml's ``_Element`` (our own parse) and ``lxml.html.HtmlElement`` (parsel's tree: the page as
#: the spider's selectors parsed it). Both are lxml's ``struct LxmlElement``: a Python subclass only
#: adds fields after it.
ELEMENT_TYPES: tuple[type, ...] = (etree._Element, HtmlElement)


_WALKERS: dict[type, Any] = {}


_WALKER_ERROR: str | None = None


_FLAT: Any = None


_NATIVE_LOCK = threading.Lock()


def _lxml_versions() -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(etree.LXML_VERSION), tuple(etree.LIBXML_VERSION)


def html_walker(element_type: type = etree._Element) -> Any:
    """The shared native ``HtmlWalker`` of ``element_type`` (one of :data:`ELEMENT_TYPES`), or
    ``None`` (see :func:`html_walk_status`)."""
    global _WALKER_ERROR
    walker = _WALKERS.get(element_type)
    if walker is None and _WALKER_ERROR is None and element_type in ELEMENT_TYPES:
        with _NATIVE_LOCK:
            walker = _WALKERS.get(element_type)
            if walker is None and _WALKER_ERROR is None:
                lxml_version, libxml_version = _lxml_versions()
                if _native.module() is None:
                    _WALKER_ERROR = _walker_unavailable()
                elif (lxml_version[0], libxml_version[0]) not in HTML_VERIFIED:
                    _WALKER_ERROR = (
                        f"lxml {'.'.join(map(str, lxml_version))} with libxml2 {'.'.join(map(str, libxml_version))} "
                        "is not verified for it (extract.HTML_VERIFIED)"
                    )
                else:
                    walker = _WALKERS[element_type] = _native.html_walker(
                        element_type, rules.native_rules(boilerplate_any=is_boilerplate, meta_text=is_meta_text)
                    )
    return walker


def _walker_unavailable() -> str:
    why = _native.unavailable() or ""
    return (
        "the native core is not installed"
        if why.startswith("the native core")
        else f"the native core is not used ({why})"
    )


def html_walk_status() -> str:
    """For the start-up line: "native HTML walk", or "Python HTML walk (<why>)"."""
    if html_walker() is not None:
        return "native HTML walk"
    return f"Python HTML walk ({_WALKER_ERROR})"


def native_comment_runs(root: Any) -> bool | None:
    """Whether a comment below ``root`` may split a text run (``HtmlWalker.comment_runs``: when
    False, :func:`~scrapy_simhash.text.extract._comment_splits` is False too); ``None`` when the
    native core cannot read ``root``."""
    if type(root) not in ELEMENT_TYPES:
        return None
    walker = html_walker(type(root))
    if walker is None:
        return None
    return walker.comment_runs(root)  # type: ignore[no-any-return]


def native_walk(root: Any, remaining: float | None, max_blocks: int, step: int) -> tuple[Any, ...] | None:
    """The native walk of ``root`` (see ``HtmlWalker.walk``): ``("ok", ...)``, ``("large",)`` or
    ``("budget",)``; ``None`` when the Python walk must run (counted in :data:`HTML_WALKS`)."""
    if type(root) not in ELEMENT_TYPES:
        HTML_WALKS[f"python: not an lxml element the walk reads ({type(root).__name__})"] += 1
        return None
    walker = html_walker(type(root))
    if walker is None:
        HTML_WALKS[f"python: {_WALKER_ERROR}"] += 1
        return None
    result = walker.walk(root, remaining=remaining, max_blocks=max_blocks, step=step)
    if result[0] == "unsupported":
        HTML_WALKS[f"python: {result[1]}"] += 1
        return None
    HTML_WALKS["native"] += 1
    return result  # type: ignore[no-any-return]


def native_flat_text() -> Any:
    """The shared native ``FlatText`` (:func:`_flat_text`, the title of :func:`_flat_document`,
    :func:`_unescape`, and ``templates.line_keys``), or ``None`` (not installed, or a Python whose
    ``html`` module lacks the tables it reads)."""
    global _FLAT
    if _FLAT is None:
        with _NATIVE_LOCK:
            if _FLAT is None:
                _FLAT = _native.flat_text([*rules.INVISIBLE_ELEMENTS.split("|"), "title"], rules.BLOCK) or False
    return _FLAT or None


def walk_native(walker: Walker, root: Any) -> bool:
    """:meth:`Walker.walk` of ``root`` by the native core (:func:`native_walk`): the same blocks
    (classified: :func:`_classify_base`), element numbering, landmark and stops. False (counted there) when it cannot run: not
    installed, an lxml it was not verified on, a tree it does not handle. It also reads whether a
    comment may split a text run (``walker.comments``: :func:`native_comment_runs` of ``root``)."""
    remaining = None if walker.deadline is None else walker.deadline - time.perf_counter()
    result = native_walk(root, remaining, rules.MAX_BLOCKS, rules.BUDGET_STEP)
    if result is None:
        return False
    if result[0] != "ok":
        raise Budget(result[0])
    blocks, walker.parent, walker.end, walker.landmark, walker.next_check, walker.comments = result[1:]
    walker.core = html_walker(type(root))
    new = Block.__new__
    for text, links, owner, meta, flags, weight, base, teaser in blocks:
        if weight < 0:  # full-width letters or digits: folded (NFKC) and classified here
            walker.blocks.append(Block(text, links, owner, meta, flags))
            continue
        block = new(Block)
        block.text = block.norm = text
        block.links = links
        block.meta = meta
        block.owner = owner
        block.flags = flags
        block.weight = weight
        block.base = base  # _classify_base's, natively
        block.teaser = teaser
        walker.blocks.append(block)
    return True
