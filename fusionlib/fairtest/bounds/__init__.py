"""Sharp bounds on fairness metrics from two tables (seed 002, Section 6, "future work"; chapter
``notebooks/fairness_bounds.md``).

Rooms: ``sharp`` (the bounds on DI, DP, AOD, EOD), ``lp`` (the coupling linear program),
``exact`` (certified bounds over every coupling), ``runs`` (one dataset: intervals, real values,
estimator points), ``cells`` (experiment ``fairness_bounds``).
"""
