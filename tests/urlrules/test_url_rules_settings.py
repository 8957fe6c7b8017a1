"""The URL rules' settings: read once, a bad value named with its valid range; off means no middleware."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.exceptions import NotConfigured

from scrapy_simhash.scrapy.state import get_config
from scrapy_simhash.scrapy.urlrules import SimhashUrlRulesMiddleware


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SIMHASH_URL_RULES_MIN_SUPPORT", 5, "SIMHASH_URL_RULES_MIN_SUPPORT"),
        ("SIMHASH_URL_RULES_CONFIDENCE", 1, "above 0 and below 1"),
        ("SIMHASH_URL_RULES_CONFIDENCE", "x", "above 0 and below 1"),
        ("SIMHASH_URL_RULES_EXPLORE", 1.5, "between 0 and 1"),
    ],
)
def test_a_bad_value_is_refused_naming_the_setting(make_crawler: Any, name: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_config(make_crawler(**{name: value}))


def test_the_values_reach_the_config(make_crawler: Any) -> None:
    config = get_config(
        make_crawler(
            SIMHASH_URL_RULES="1",
            SIMHASH_URL_RULES_MIN_SUPPORT="30",
            SIMHASH_URL_RULES_CONFIDENCE="0.95",
            SIMHASH_URL_RULES_EXPLORE="0.1",
        )
    )
    assert (config.url_rules, config.url_rules_min_support, config.url_rules_confidence, config.url_rules_explore) == (
        True,
        30,
        0.95,
        0.1,
    )


def test_off_by_default_the_middleware_is_not_configured(make_crawler: Any) -> None:
    with pytest.raises(NotConfigured, match="SIMHASH_URL_RULES = True"):
        SimhashUrlRulesMiddleware.from_crawler(make_crawler())
