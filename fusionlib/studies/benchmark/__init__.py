"""One benchmark across the papers (chapter ``notebooks/benchmark.md``).

Rooms: ``runs`` (every generator on one task), ``cells`` (experiment ``benchmark``).
"""
