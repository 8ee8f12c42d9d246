"""Compendium machinery: what turns code into a checked, rendered reproduction.

Modules
-------
run          the ``Run`` object of a notebook: scale, configuration, results, claims, provenance
claims       the scorecard's claim schema, verdicts and tallies
paper        the papers' tables as data files (``fusionlib/compendium/paper_tables/``)
inventory    every table, figure, proposition and algorithm of the three seeds, and its status
provenance   commit, versions, device and time of a run
scales       smoke / cpu / paper
runner       execution of the notebooks with papermill, keyed on what they depend on
"""
