"""Reversible encodings of tables: one-hot blocks and PTGAN's [-1, 1] / one-hot encoding."""

from fusionlib.encoding.onehot import OneHotEncoder
from fusionlib.encoding.tabular import Span, TabularEncoder

__all__ = ["OneHotEncoder", "Span", "TabularEncoder"]
