"""Gradient variance of PTGAN's critic (seed 001, Sections 2.3.2 and 4.2, SM A.3, D.1; chapter
``notebooks/ptgan_variance.md``).

Rooms: ``collapse`` (the collapsed-generator toy of Figures 2 and 4), ``linear``
(Proposition 5), ``runs`` (gradient variance during training and under injected noise),
``cells`` (experiments ``ptgan_var_*``).
"""
