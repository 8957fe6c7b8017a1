"""The private parts of Scrapy this package reads or writes, each behind one function here, so
that a Scrapy that changes them is met in one module (tested on the oldest supported Scrapy and
the newest: ``tests/glue/test_compat.py``, also run by ``./dev test-min``)."""

from __future__ import annotations

from typing import Any

from scrapy.http import Response, TextResponse

#: What :func:`cached_selector` returns on a Scrapy that keeps no selector cache.
NO_CACHE: Any = object()


def declared_encoding(response: TextResponse) -> str | None:
    """The encoding the response declares (the caller's, a BOM, the HTTP header, a ``<meta>``;
    Scrapy's ``TextResponse._declared_encoding``), or ``None``: none, or a Scrapy without it."""
    try:
        return response._declared_encoding() or None
    except Exception:  # noqa: BLE001 - a Scrapy without it, or a broken body: no declared charset
        return None


def cached_selector(response: Response) -> Any:
    """The selector Scrapy cached for ``response.selector`` (``None``: not built yet), or
    :data:`NO_CACHE` on a Scrapy that keeps no such cache."""
    return getattr(response, "_cached_selector", NO_CACHE)


def drop_cached_selector(response: Response) -> None:
    """Forget the response's cached selector (and the lxml tree it holds); a later
    ``response.selector`` builds a new one."""
    if getattr(response, "_cached_selector", None) is not None:
        response._cached_selector = None  # type: ignore[attr-defined]
