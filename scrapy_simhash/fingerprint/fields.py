"""The text of an item's fields, as the item pipeline and the ``dedup`` command fingerprint it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

#: The field that is passed as the title (when SIMHASH_ITEM_FIELDS lists it).
TITLE_FIELD = "title"


def fields_text(item: Any, fields: Iterable[str]) -> tuple[str, str]:
    """``(title, text)`` of an item (anything with ``.get``: an ItemAdapter, a dict) for
    ``SIMHASH_ITEM_FIELDS``: the ``title`` field is the title, the other fields' text is joined
    by newlines."""
    title = ""
    parts: list[str] = []
    for field in fields:
        value = _text_of(item.get(field))
        if not value:
            continue
        if field == TITLE_FIELD and not title:
            title = value
        else:
            parts.append(value)
    return title, "\n".join(parts)


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)):
        return "\n".join(part.strip() for part in value if isinstance(part, str) and part.strip())
    return ""
