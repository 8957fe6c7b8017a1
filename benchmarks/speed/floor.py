"""Floors for ``bench_crawl.py --configs floor-pass,floor-store,floor-text,floor-walk,floor-fp,floor-index``:
spider middlewares that each do part of what the middleware does for a page, with the package's
own functions. A crawl with one of them installed instead of the middleware does less than the
middleware's: a bar on the crawl's speed above a floor's ratio cannot be met by any change to what
that floor leaves out.

Each also freezes the garbage collector's start-up objects when the spider opens, as the
middleware does (``middleware.freeze_startup``: each later full collection skips them).

- ``PassFloor`` (``floor-pass``): nothing else; one more spider middleware in the chain.
- ``StoreFloor`` (``floor-store``): one LMDB write transaction a page, opened as the store opens
  its environment (not durable): a hash of the URL under the URL's key, and the key under each of
  the index's 4 bands.
- ``WalkFloor`` (``floor-walk``): what the native core does for a page, alone: the native walk of
  the tree the spider's selectors use (``HtmlWalker.walk``), then the tokens, SimHash and sketch
  of all the blocks' text (``Core.page``; no content region, no title), then the same write.
- ``TextFloor`` (``floor-text``): all the tree's text as libxml2 serialises it
  (``etree.tostring(method="text")``: no walk), then ``Core.page`` of it and the write. Less work
  than any fingerprint of the page's text where a page has little script and style (their text is
  included: on real news pages it is far more text than the walk reads).
- ``FingerprintFloor`` (``floor-fp``): the page's fingerprint exactly as the middleware computes
  it (``Fingerprinter.fingerprint_page`` on that tree, without site templates), then the same
  write.
- ``IndexFloor`` (``floor-index``): that fingerprint, then the index's atomic near-duplicate test
  and add (``SimhashIndex.check_and_add`` on the LMDB store with its default settings, as the
  middleware opens it) instead of the write: the least of the decision, with no history, no
  change sketch read, no schedule.
"""

from __future__ import annotations

import hashlib
import struct
import tempfile
from pathlib import Path
from typing import Any

import lmdb
from lxml import etree
from scrapy import signals
from scrapy.http import TextResponse

from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter
from scrapy_simhash.scrapy.middleware import freeze_startup, response_text, thaw
from scrapy_simhash.scrapy.tree import shared_tree
from scrapy_simhash.store import LmdbStore
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.text.features import normalize
from scrapy_simhash.text.native import native_walk
from scrapy_simhash.text.rules import BUDGET_STEP, MAX_BLOCKS

_FP = struct.Struct("<Q")


class _Floor:
    def __init__(self) -> None:
        self.fingerprinter = Fingerprinter()
        self._dir = tempfile.TemporaryDirectory(prefix="floor-")
        # not durable, as the store opens its environment in a crawl (SIMHASH_DURABLE = False)
        self.env = lmdb.open(self._dir.name, map_size=1 << 30, max_dbs=2, sync=False, metasync=False)
        self.records = self.env.open_db(b"records")
        self.bands = self.env.open_db(b"bands", dupsort=True)
        self._frozen = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> _Floor:
        floor = cls()
        crawler.signals.connect(floor.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(floor.spider_closed, signal=signals.spider_closed)
        return floor

    def spider_opened(self, spider: Any) -> None:
        self._frozen = freeze_startup()  # the middleware's start-up freeze of the collector

    def spider_closed(self, spider: Any) -> None:
        if self._frozen:
            thaw()
        self.env.close()
        self._dir.cleanup()

    def process_spider_output(self, response: Any, result: Any, spider: Any = None) -> Any:
        self._observe(response)
        yield from result

    async def process_spider_output_async(self, response: Any, result: Any, spider: Any = None) -> Any:
        self._observe(response)
        async for obj in result:
            yield obj

    def _observe(self, response: Any) -> None:
        if isinstance(response, TextResponse):
            try:
                fp, sketch = self._page(response)
            except EmptyTextError:
                return
            self._store(response.url, fp, sketch)

    def _page(self, response: TextResponse) -> tuple[int, bytes]:
        raise NotImplementedError

    def _store(self, url: str, fp: int, sketch: bytes) -> None:
        key = url.encode()
        with self.env.begin(write=True) as txn:
            txn.put(key, _FP.pack(fp) + sketch, db=self.records)
            for band in range(4):
                txn.put(struct.pack("<BH", band, (fp >> (16 * band)) & 0xFFFF), key, db=self.bands)


class PassFloor(_Floor):
    def _observe(self, response: Any) -> None:
        pass


class StoreFloor(_Floor):
    def _page(self, response: TextResponse) -> tuple[int, bytes]:
        return int.from_bytes(hashlib.blake2b(response.url.encode(), digest_size=8).digest(), "little"), b""


class FingerprintFloor(_Floor):
    def _page(self, response: TextResponse) -> tuple[int, bytes]:
        html = response_text(response)
        tree, _ = shared_tree(response, html)
        page = self.fingerprinter.fingerprint_page(html, url=response.url, tree=tree)
        return page.fp, page.sketch or b""


class IndexFloor(FingerprintFloor):
    def __init__(self) -> None:
        super().__init__()
        self.index = SimhashIndex(
            LmdbStore(Path(self._dir.name) / "index"), fingerprint_settings=self.fingerprinter.settings
        )

    def _store(self, url: str, fp: int, sketch: bytes) -> None:
        self.index.check_and_add(url, fp)

    def spider_closed(self, spider: Any) -> None:
        self.index.close()
        super().spider_closed(spider)


class TextFloor(_Floor):
    def _page(self, response: TextResponse) -> tuple[int, bytes]:
        return self._fingerprint(etree.tostring(self._tree(response), method="text", encoding=str))

    @staticmethod
    def _tree(response: TextResponse) -> Any:
        tree, _ = shared_tree(response, response_text(response))
        return response.selector.root if tree is None else tree  # none to share: parse as the spider would

    def _fingerprint(self, text: str) -> tuple[int, bytes]:
        core = self.fingerprinter._native_core()
        if core is None:
            raise RuntimeError("the floors run the native core, which is not installed here")
        page = core.page(normalize(text), None, **self.fingerprinter._native_options(), lines=False) if text else None
        if page is None:
            return 0, b""
        fp, _, sketch, _, _ = page
        return fp, sketch or b""


class WalkFloor(TextFloor):
    def _page(self, response: TextResponse) -> tuple[int, bytes]:
        result = native_walk(self._tree(response), None, MAX_BLOCKS, BUDGET_STEP)
        return self._fingerprint("\n".join(block[0] for block in result[1]) if result and result[0] == "ok" else "")
