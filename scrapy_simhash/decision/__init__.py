"""The decision layer: what one fetched page is (new, a near-duplicate of a kept page, unchanged or
changed since its last fetch) and why (``verdicts``), decided over the index in one store
transaction (``tracker``: :class:`ChangeTracker`), with the per-URL record it keeps (``record``)
and the copies of short and template-only pages (``shortcopy``). It imports the fingerprint and
store layers, never the Scrapy glue."""
