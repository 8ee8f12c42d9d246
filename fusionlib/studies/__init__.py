"""Studies across the papers (the floor above the paper packages).

A study compares what several papers' methods do on one task, so it may import every paper
package (``fairtest``, ``ptgan``, ``fusion``) and everything below them; nothing imports a study.
"""

__all__: list[str] = []
