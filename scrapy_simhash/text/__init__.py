"""Text extraction: HTML bytes -> decoded text -> main content and title (``extract``), text ->
tokens and weights (``features``), and the site template lines learned per host (``templates``).
The lowest layer: it imports no other layer of the package."""
