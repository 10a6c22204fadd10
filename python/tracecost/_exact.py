"""Exact sums of dollar figures, the same in any order.

A fleet's cost under a config is the sum of its sessions' costs. Each
session's cost is the f64 the command line prints (its calls summed in call
order). Summed in floating point, the total would depend on the order of the
sessions, and a distributed sum has no fixed order. So the fleet total is
defined as the *exact* sum of the sessions' f64 values, rounded once to the
nearest f64 — :func:`math.fsum` computes it locally, and a distributed job
gets the same bits by summing exact integers (:func:`to_limbs`, summed
column by column, then :func:`from_limbs`).

Every f64 ``x`` with no bit below ``2**-SCALE_BITS`` is the integer
``x * 2**SCALE_BITS`` scaled down; that integer is cut into ``LIMBS``
pieces of ``LIMB_BITS`` bits each, small enough that a 64-bit column sum
of up to ``2**33`` of them cannot overflow.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, List, Sequence

SCALE_BITS = 128
"""Figures are carried in units of ``2**-128`` USD: exact for any nonzero
f64 down to about 1e-23 USD, far below a single token's price."""

LIMB_BITS = 30
LIMBS = 7
"""7 pieces of 30 bits: 210 bits, enough for any figure below 2**82 USD."""

_MASK = (1 << LIMB_BITS) - 1


def exact_sum(values: Iterable[float]) -> float:
    """The exact sum of ``values``, rounded once to the nearest f64."""
    return math.fsum(values)


def to_limbs(x: float) -> List[int]:
    """``x`` as ``LIMBS`` integers whose weighted sum is exactly
    ``x * 2**SCALE_BITS`` (all of the sign of ``x``)."""
    if not math.isfinite(x):
        raise ValueError(f"cannot sum a non-finite figure exactly: {x!r}")
    scaled = Fraction(x) * (1 << SCALE_BITS)
    if scaled.denominator != 1:
        raise ValueError(f"figure {x!r} has bits below 2**-{SCALE_BITS}: cannot carry it exactly")
    n = int(scaled)
    sign = -1 if n < 0 else 1
    n = abs(n)
    if n >> (LIMB_BITS * LIMBS):
        raise ValueError(f"figure {x!r} is too large to carry exactly")
    return [sign * ((n >> (LIMB_BITS * i)) & _MASK) for i in range(LIMBS)]


def from_limbs(sums: Sequence[int]) -> float:
    """The f64 nearest to the total that summed limbs stand for."""
    n = sum(int(s) << (LIMB_BITS * i) for i, s in enumerate(sums))
    # int / int is correctly rounded in Python: one rounding, as fsum.
    return n / (1 << SCALE_BITS)
