"""Scrapy project of the scrapy-simhash demo: a spider for the bundled site in ``example_project/site``."""
