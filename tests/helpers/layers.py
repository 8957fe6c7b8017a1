"""The package's layers, lowest first (docs/topics/maintainers.rst): a module imports only its own
layer and those before it, and a page's calls go only down them."""

LAYERS = ["text", "fingerprint", "schedule", "store", "decision", "urlrules", "scrapy", "commands"]


def is_upward(caller: str | None, callee: str | None) -> bool:
    """Whether a dependency from the layer ``caller`` to the layer ``callee`` goes up (``None``: a
    top-level leaf module, which may be used by any layer and uses none)."""
    if callee is None:
        return False
    return caller is None or LAYERS.index(callee) > LAYERS.index(caller)
