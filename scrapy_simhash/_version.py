"""The package's version: a leaf, so that the native boundary (``_native``) checks the core's
version against it without importing the package's other modules."""

__version__ = "0.1.0"
