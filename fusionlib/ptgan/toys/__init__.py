"""PTGAN on the 8-Gaussian ring (seed 001, Figures 1, 9, 11; chapter ``notebooks/ptgan_toys.md``).

Rooms: ``data`` (toy distributions and their mode metrics), ``runs`` (training runs on the
ring and their summaries), ``cells`` (experiments ``ptgan_ring``, ``ptgan_fig11``,
``ptgan_mixup``).
"""
