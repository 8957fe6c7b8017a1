"""URL rules learned from the crawl's verdicts: which URL differences never change a page, so that its copies need no fetch."""

from __future__ import annotations

from scrapy_simhash.urlrules.learner import Event, IndexRuleStore, Plan, RuleBook
from scrapy_simhash.urlrules.rules import Rule, explored, hypotheses, rewrite, wilson_lower

__all__ = ["Event", "IndexRuleStore", "Plan", "Rule", "RuleBook", "explored", "hypotheses", "rewrite", "wilson_lower"]
