"""Reversible encodings of tables: one-hot blocks and PTGAN's [-1, 1] / one-hot encoding."""

from fusionlib.encoding.onehot import IndicatorEncoder
from fusionlib.encoding.tabular import Span, TabularEncoder

__all__ = ["IndicatorEncoder", "Span", "TabularEncoder"]
