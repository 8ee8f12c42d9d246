"""One seed scheme: independent random streams derived from a root seed and named keys.

Every random draw of the package starts here. A *stream* is named by a root seed (an int, set
once per run, e.g. ``make book SEED=...``) and a path of keys such as
``("ptgan_toys", "pt+cp", "rep", 3, "eval")``. NumPy's :class:`numpy.random.SeedSequence`
mixes the root entropy with the key path (its ``spawn_key``), so two different paths give
statistically independent streams, whatever the numbers in them: there is no seed arithmetic
(``seed + 1``, ``seed * 7919 + t``) anywhere else in the package, and therefore no two roles
that silently share a stream.

Strings in a key path are hashed (SHA-256, first 4 bytes), integers are used as they are
(they must be >= 0), so ``("rep", 3)`` and ``("rep", 4)`` differ and ``("iter", 3)`` differs
from ``("rep", 3)``.

Examples
--------
>>> a = numpy_rng(0, "toy", "rep", 1).random()
>>> b = numpy_rng(0, "toy", "rep", 2).random()
>>> a != b
True
>>> seed_int(0, "toy") == seed_int(0, "toy")
True
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

from fusionlib.checks import check_seed, is_int
from fusionlib.errors import InvalidInputError

if TYPE_CHECKING:  # torch is imported lazily: the ground layer must not need it
    import torch

__all__ = ["Key", "Seed", "sequence", "seed_int", "numpy_rng", "torch_generator", "child"]

Key = str | int
#: A root seed, or a (root, key, ...) tuple as returned by :func:`child`.
Seed = int | tuple


def _key_int(key: Key) -> int:
    if isinstance(key, str):
        return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:4], "little")
    if is_int(key) and key >= 0:
        return int(key)
    raise InvalidInputError(
        f"a stream key must be a string or an integer >= 0, got {key!r}; "
        "name the role with a string (e.g. 'eval') and index repetitions with ints")


def _split(seed: Seed) -> tuple[int, tuple[Key, ...]]:
    if isinstance(seed, tuple):
        if not seed:
            raise InvalidInputError("an empty seed tuple has no root; pass (root, *keys)")
        return _split_root(seed[0]), tuple(seed[1:])
    return _split_root(seed), ()


def _split_root(root: object) -> int:
    return check_seed("the root seed", root)


def sequence(seed: Seed, *keys: Key) -> np.random.SeedSequence:
    """The :class:`~numpy.random.SeedSequence` of stream ``seed / keys``.

    ``seed`` is a root int or a tuple made by :func:`child` (a root plus keys); ``keys`` are
    appended to its path.
    """
    root, prefix = _split(seed)
    path = tuple(_key_int(k) for k in (*prefix, *keys))
    return np.random.SeedSequence(entropy=root, spawn_key=path)


def child(seed: Seed, *keys: Key) -> tuple:
    """A seed that names a sub-stream: pass it wherever a ``seed`` is accepted.

    ``child(0, "rep", 2)`` is ``(0, "rep", 2)``; ``child(child(0, "rep", 2), "eval")`` is
    ``(0, "rep", 2, "eval")``. Functions that take a ``seed`` derive their own streams from it,
    so handing a child to each part of an experiment keeps every stream distinct.
    """
    root, prefix = _split(seed)
    for k in keys:
        _key_int(k)
    return (root, *prefix, *keys)


def seed_int(seed: Seed, *keys: Key) -> int:
    """A 32-bit integer seed for stream ``seed / keys``, for libraries that take an int
    (scikit-learn's and pandas' ``random_state`` accept values below 2**32)."""
    return int(sequence(seed, *keys).generate_state(1, dtype=np.uint32)[0])


def numpy_rng(seed: Seed, *keys: Key) -> np.random.Generator:
    """A NumPy generator (PCG64) on stream ``seed / keys``."""
    return np.random.Generator(np.random.PCG64(sequence(seed, *keys)))


def torch_generator(seed: Seed, *keys: Key, device: str = "cpu") -> torch.Generator:
    """A :class:`torch.Generator` on ``device`` seeded from stream ``seed / keys`` (63 bits)."""
    import torch

    state = sequence(seed, *keys).generate_state(2, dtype=np.uint32)
    value = ((int(state[0]) << 32) | int(state[1])) & ((1 << 63) - 1)
    return torch.Generator(device=device).manual_seed(value)
