"""Reversible encodings of tables."""

from fusionlib.encoding.tabular import Span, TabularEncoder

__all__ = ["Span", "TabularEncoder"]
