"""The experiment protocol of seed 002 (Sections 4-5, Appendix C; chapter
``notebooks/fairness_testing.md``).

Rooms: ``runs`` (the protocol's steps per dataset), ``records`` (what the steps pass on, and
the settings), ``cells`` (experiment ``fairtest_protocol``), ``summary_io`` (what a cell stores,
read back), ``report`` (paper-vs-ours tables and figure inputs).
"""
