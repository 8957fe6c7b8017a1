"""Sphinx configuration of the scrapy-simhash documentation (``./dev docs`` builds it)."""

from __future__ import annotations

import sys
from pathlib import Path

# The package is documented from this checkout, not from an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scrapy_simhash

project = "scrapy-simhash"
author = "the scrapy-simhash authors"
release = scrapy_simhash.__version__
version = release

extensions = ["sphinx.ext.autodoc"]
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
html_theme = "alabaster"
html_theme_options = {"description": "Content-aware Scrapy crawls", "fixed_sidebar": True, "page_width": "1200px"}
html_static_path = ["_static"]
html_css_files = ["custom.css"]
