"""Text extraction: HTML bytes -> decoded text -> main content and title (``extract``), text ->
tokens and weights (``features``). The lowest layer: it imports no other layer of the package."""
