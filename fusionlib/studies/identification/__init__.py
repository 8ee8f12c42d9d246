"""Identification from two sources (chapter ``notebooks/identification.md``).

Rooms: ``data`` (the designs: source laws and their population values), ``cells``
(experiment ``identification``).
"""
