"""FairPTGAN: fair data generation (seed 001, Section 5.2, Appendix D.3; chapter
``notebooks/fairptgan.md``).

Rooms: ``mixing`` (Algorithm 2, group-mixed minibatches), ``baselines`` (FairWGANGP and the
geometric repair), ``evaluation`` (downstream AUC / SP, Pareto fronts), ``runs`` (one run),
``cells`` (experiment ``fairptgan``), ``report`` (what the chapter compares).
"""
