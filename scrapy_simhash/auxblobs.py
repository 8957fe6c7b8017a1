"""AuxBlobs: the index's named auxiliary blobs as the layers below the store read and write them
(the site templates, the start times of incremental runs); a leaf that imports nothing."""

from __future__ import annotations

from typing import Protocol


class AuxBlobs(Protocol):
    """What keeps named blobs beside the index's records: a ``SimhashIndex``."""

    def get_aux(self, name: str) -> bytes | None:
        """The blob ``name``, or ``None``."""

    def put_aux(self, name: str, value: bytes | None) -> None:
        """Store (``None``: delete) the blob ``name``."""
