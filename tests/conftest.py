"""Shared fixtures. Real-data tests skip (with the reason) only when the data are absent;
`make test` provisions them first, so in CI they always run."""

from __future__ import annotations

import pytest

from fusionlib.errors import DataUnavailableError


def require_data(name: str):
    from fusionlib.data import load

    try:
        return load(name)
    except DataUnavailableError as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"{name} not provisioned ({exc}); run `make data`")
