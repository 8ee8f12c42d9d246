"""The :class:`Run` object every notebook uses: scale, configuration, results, claims, provenance.

A notebook creates one ``Run`` after its ``parameters`` cell, picks its configuration for the
current scale, saves tables and figures (atomically), registers scorecard claims, and calls
:meth:`Run.finish`, which writes ``provenance.json`` and ``claims.csv``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pandas as pd

from fusionlib.compendium.claims import Claim, claims_frame, make_claim
from fusionlib.compendium.provenance import provenance_record
from fusionlib.compendium.scales import SCALES, validate_scale
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write, atomic_write_json

__all__ = ["Run", "torch_device"]


def torch_device() -> str:
    """``"cuda"`` when torch sees a GPU, else ``"cpu"``."""
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:  # pragma: no cover
        return "cpu"


class Run:
    """One execution of one notebook.

    Parameters
    ----------
    name:
        The notebook's name (file stem); used for the default results folder and claim rows.
    scale:
        One of :data:`fusionlib.compendium.scales.SCALES`.
    seed:
        The base seed; experiments derive per-repetition seeds from it explicitly.
    results_dir:
        Where results go; ``None`` means ``./results/<name>``.
    params:
        Further notebook parameters to record in the provenance.
    """

    def __init__(
        self,
        name: str,
        *,
        scale: str,
        seed: int = 0,
        results_dir: str | os.PathLike[str] | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.scale = validate_scale(scale)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise InvalidInputError(f"seed must be an int, got {seed!r}")
        self.seed = seed
        self.results_dir = Path(results_dir) if results_dir else Path("results") / name
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self.params = dict(params or {})
        self.config: dict[str, Any] = {}
        self.device = torch_device()
        self._claims: list[Claim] = []
        self._files: list[str] = []
        self._t0 = time.perf_counter()

    # ----------------------------------------------------------------- configuration
    def pick(self, **by_scale: dict[str, Any]) -> dict[str, Any]:
        """Return the configuration for the current scale; every scale must be given."""
        missing = [s for s in SCALES if s not in by_scale]
        unknown = [s for s in by_scale if s not in SCALES]
        if missing or unknown:
            raise InvalidInputError(
                f"pick() needs exactly the scales {', '.join(SCALES)}; "
                f"missing {missing}, unknown {unknown}"
            )
        self.config = dict(by_scale[self.scale])
        return dict(self.config)

    def banner(self) -> Any:
        """A Markdown note stating the scale (display it near the top of the notebook)."""
        from IPython.display import Markdown

        meaning = {
            "smoke": "every code path runs once on tiny settings; **numbers are not meaningful**",
            "cpu": "reduced runs (fewer iterations, seeds or bootstraps than the papers) on a "
            "2-core CPU; numbers are indicative and labelled with this scale",
            "paper": "the papers' full protocol",
        }[self.scale]
        cfg = ", ".join(f"`{k}={v}`" for k, v in self.config.items()) or "defaults"
        return Markdown(
            f"```{{note}}\nComputed at scale **`{self.scale}`** ({meaning}), base seed "
            f"{self.seed}, device `{self.device}`. Settings: {cfg}.\n```"
        )

    # ----------------------------------------------------------------- outputs
    def _path(self, name: str, suffix: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise InvalidInputError(f"result name {name!r} must be a plain file stem")
        self._files.append(name + suffix)
        return self.results_dir / (name + suffix)

    def save_table(self, df: pd.DataFrame, name: str) -> Path:
        """Write ``df`` to ``<results_dir>/<name>.csv`` atomically."""
        return atomic_write(self._path(name, ".csv"), lambda p: df.to_csv(p, index=False))

    def save_json(self, obj: Any, name: str) -> Path:
        """Write ``obj`` to ``<results_dir>/<name>.json`` atomically."""
        return atomic_write_json(self._path(name, ".json"), obj)

    def save_figure(self, fig: Any, name: str, *, dpi: int = 110) -> Path:
        """Save a matplotlib figure as ``<results_dir>/<name>.png`` atomically."""
        return atomic_write(
            self._path(name, ".png"),
            lambda p: fig.savefig(p, dpi=dpi, bbox_inches="tight", format="png"),
        )

    # ----------------------------------------------------------------- claims
    def claim(
        self,
        claim_id: str,
        seed_file: str,
        where: str,
        quantity: str,
        paper: object,
        ours: object,
        *,
        tolerance: float | None = None,
        verdict: str | None = None,
        reason: str = "",
        not_run: str | None = None,
        why: str = "",
    ) -> Claim:
        """Register one scorecard row (see :func:`fusionlib.compendium.claims.make_claim`)."""
        c = make_claim(
            claim_id, seed_file, where, quantity, paper, ours, scale=self.scale,
            experiment=self.name, tolerance=tolerance, verdict=verdict, reason=reason,
            not_run=not_run, why=why,
        )
        self._claims = [x for x in self._claims if x.claim_id != claim_id] + [c]
        return c

    @property
    def claims(self) -> pd.DataFrame:
        """The claims registered so far, as a DataFrame."""
        return claims_frame(self._claims)

    def finish(self) -> dict[str, Any]:
        """Write ``claims.csv`` and ``provenance.json``; return the provenance record."""
        frame = claims_frame(self._claims)
        atomic_write(self.results_dir / "claims.csv", lambda p: frame.to_csv(p, index=False))
        record = provenance_record(
            experiment=self.name, scale=self.scale, seed=self.seed, params=self.params,
            config=self.config, device_used=self.device, files=sorted(set(self._files)),
            n_claims=len(frame), wall_time_s=round(time.perf_counter() - self._t0, 2),
        )
        atomic_write_json(self.results_dir / "provenance.json", record)
        return record
