"""Shared metrics: every paper scores its generators with these.

Modules
-------
fidelity     SDMetrics-style table fidelity: TVComplement, ContingencySimilarity, the
             discriminator measure, the KL divergence of a joint (seed 002)
association  Cramér's V, DCC matrices, mutual information (seed 002)
fairness     DI, AOD, EOD from one group-confusion engine, with a seeded bootstrap
distances    exact 1-Wasserstein distance between two samples (POT)
coverage     nearest-neighbour coverage of seed 000, section E (as written and k-th variants)
mmd          MMD with an RBF kernel and the median heuristic (seed 000, section F), chunked
prdc         precision, recall, density, coverage (Naeem et al. 2020)
privacy      distance to closest record (memorisation check)
image_scores Fréchet distance and Inception-style score on features (torch-fidelity optional)
image_classifier  the project's feature classifier for classifier-FID / classifier-IS

Import from the module (``from fusionlib.metrics.mmd import mmd``); this package imports
nothing heavy on its own.
"""
