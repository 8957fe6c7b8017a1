"""Recrawl schedule states as the policies leave them (for the codec and record tests)."""

from __future__ import annotations


def random_states(n: int, seed: int) -> list:
    """Schedule states as policies leave them: full-precision floats (unrounded times and rates),
    some already to the millisecond (read back from a record), long and empty histories."""
    import random

    from scrapy_simhash.schedule import DAY, FixedIntervalPolicy, FreshnessPolicy, NutchAdaptivePolicy, ScheduleState

    rng = random.Random(seed)
    policies = [FreshnessPolicy(), NutchAdaptivePolicy(), FixedIntervalPolicy(), FreshnessPolicy(uncertainty=False)]
    states = []
    for i in range(n):
        policy = policies[i % len(policies)]
        now = rng.choice((0.0, 1_700_000_000.0)) + rng.uniform(0, 1e6)
        state = None
        for _ in range(rng.randrange(0, 25)):
            state = policy.observe(state, now, None if state is None else rng.random() < 0.4, rng.choice((0, 3, 9, 40)))
            now += rng.choice((rng.uniform(60, 90 * DAY), round(rng.uniform(60, DAY), 3), 3600.0))
            if rng.random() < 0.3:  # read back from a record: every number to the millisecond
                state = ScheduleState.from_dict(state.to_dict())
        states.append(policy.observe(state, now, None if state is None else rng.random() < 0.5, 5))
    return states
