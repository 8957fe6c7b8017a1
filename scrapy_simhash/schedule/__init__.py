"""Recrawl schedules: when each known URL is due again and how valuable a fetch of it is.

The state of one URL (``state``), many URLs' states as columns (``columns``), the policies
(``policies``), one crawl's selection over many URLs (``runs``); the names below are re-exported
here, where settings name them (``SIMHASH_RECRAWL_POLICY = "scrapy_simhash.schedule.FreshnessPolicy"``).

Pure: no Scrapy and no store import. A :class:`ScheduleState` lives in a URL's record
(:meth:`ScheduleState.to_dict` / :meth:`ScheduleState.from_dict`: plain numbers only); a policy
updates it at every fetch (:meth:`SchedulePolicy.observe`) and ranks URLs
(:meth:`SchedulePolicy.priority`, or :meth:`SchedulePolicy.priorities` for many at once). A
priority of 1 or more means *due*; the higher, the more a fetch is worth, so a crawl with a budget
of ``n`` pages fetches the ``n`` highest priorities, due or not (:func:`plan_run`, the crawl's
selection).

Policies, pluggable by dotted path like Scrapy's ``HTTPCACHE_POLICY``:

* :class:`FixedIntervalPolicy`: every URL every ``default_interval``.
* :class:`NutchAdaptivePolicy`: Apache Nutch's ``AdaptiveFetchSchedule`` (changed: interval x 0.8,
  unchanged: x 1.4, SYNC_DELTA at rate 0.3, clamped), fed whatever "changed" the caller decides.
* :class:`FreshnessPolicy` (ours): estimates each URL's change rate from its change verdicts and
  fetches where a fetch buys the most expected (change-size weighted) freshness.

Times are Unix seconds, rates are changes per second, change sizes are change distances (bits).
"""

from scrapy_simhash.schedule.columns import ScheduleColumns
from scrapy_simhash.schedule.policies import (
    FixedIntervalPolicy,
    FreshnessPolicy,
    NutchAdaptivePolicy,
    SchedulePolicy,
    estimate_rate,
    refresh_value,
)
from scrapy_simhash.schedule.runs import (
    budget_interval,
    iso,
    period_of,
    plan_run,
    run_priorities,
    run_starts,
    runs_blob,
    select,
    size_scale,
)
from scrapy_simhash.schedule.state import DAY, HOUR, ScheduleState, round_ms, schedule_dict

__all__ = [
    "DAY",
    "HOUR",
    "FixedIntervalPolicy",
    "FreshnessPolicy",
    "NutchAdaptivePolicy",
    "ScheduleColumns",
    "SchedulePolicy",
    "ScheduleState",
    "budget_interval",
    "estimate_rate",
    "iso",
    "period_of",
    "plan_run",
    "refresh_value",
    "round_ms",
    "run_priorities",
    "run_starts",
    "runs_blob",
    "schedule_dict",
    "select",
    "size_scale",
]
