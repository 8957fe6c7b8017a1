"""A bounded cache of pure results, shared by the text layer and the fingerprints."""

from __future__ import annotations

from typing import Any


class SizedCache(dict):  # type: ignore[type-arg]
    """A dict of pure results bounded in entries and in the characters of its keys and values
    (a proxy for bytes: about 1-4 bytes a character, plus ~100 bytes of overhead per entry):
    when either bound would be passed it is emptied, which costs nothing and keeps memory bounded
    whatever the input (30,000 long distinct tokens cannot grow it past ``max_chars``).

    ``put(key, value, size)``: ``size`` is the value's size in characters (0 for a bool)."""

    def __init__(self, max_entries: int, max_chars: int) -> None:
        super().__init__()
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.chars = 0

    def put(self, key: str, value: Any, size: int = 0) -> None:
        cost = len(key) + size
        if len(self) >= self.max_entries or self.chars + cost > self.max_chars:
            self.clear()
        self[key] = value
        self.chars += cost

    def clear(self) -> None:
        super().clear()
        self.chars = 0
