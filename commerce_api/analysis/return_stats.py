"""The statistics of return anomalies, standard library only.

- ``binomial_sf(k, n, p)``: P(X >= k) for X ~ Binomial(n, p), through the regularized
  incomplete beta function (a continued fraction, as in Numerical Recipes §6.4): exact to
  ~1e-12 and O(1) in ``n``.
- ``poisson_sf(k, lam)``: P(X >= k) for X ~ Poisson(lam), summed from the tail.
- ``benjamini_hochberg(p_values)``: adjusted p-values (q-values) that control the false
  discovery rate over a family of tests.
- ``robust_z(values)``: Iglewicz and Hoaglin's modified z-scores, 0.6745 (x - median) / MAD;
  when MAD = 0 (more than half the weeks are equal) the mean absolute deviation stands in,
  (x - median) / (1.253314 * MeanAD), and when that is 0 too every value is the median and
  every score is 0.
"""

import math
from collections.abc import Sequence

_EPS = 3e-16
_TINY = 1e-300


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def binomial_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p): the one-sided p-value of k successes in n."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return min(1.0, max(0.0, betainc(k, n - k + 1, p)))


def poisson_sf(k: int, lam: float) -> float:
    """P(X >= k) for X ~ Poisson(lam)."""
    if k <= 0:
        return 1.0
    if lam <= 0:
        return 0.0
    if k <= lam:  # not in the tail: the complement has few terms and no cancellation
        term = total = math.exp(-lam)
        for i in range(1, k):
            term *= lam / i
            total += term
        return min(1.0, max(0.0, 1.0 - total))
    term = math.exp(-lam + k * math.log(lam) - math.lgamma(k + 1))
    total, i = 0.0, k
    while term > total * 1e-16:
        total += term
        i += 1
        term *= lam / i
    return min(1.0, total)


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values, in the order given."""
    m = len(p_values)
    if not m:
        return []
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = running
    return adjusted


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        raise ValueError("median of nothing")
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def robust_z(values: Sequence[float]) -> tuple[list[float], float]:
    """Modified z-scores of ``values`` (see the module docstring), and the median."""
    center = median(values)
    deviations = [abs(v - center) for v in values]
    mad = median(deviations)
    if mad > 0:
        return [0.6745 * (v - center) / mad for v in values], center
    mean_ad = math.fsum(deviations) / len(deviations)
    if mean_ad > 0:
        return [(v - center) / (1.253314 * mean_ad) for v in values], center
    return [0.0 for _ in values], center
