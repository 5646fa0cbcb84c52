"""Returns: what was sold and returned per SKU, each return classified, and anomalies.

The data is the tenant's orders (imported and pulled) that were not cancelled, with their
lines (units sold) and their returns. ``since`` and ``marketplace`` choose a cohort of
orders (placed at or after ``since``), and the returns counted are those of that cohort, so
every return rate compares like with like.

Anomalies (parameters in docs/decisions.md):
- ``high_return_rate``: a one-sided binomial test of the SKU's returned units against its
  units sold at the pooled rate of the tenant's other SKUs, Benjamini-Hochberg adjusted over
  every SKU with sales in the cohort; flagged when q <= ``FDR`` and at least
  ``MIN_RETURNS`` units came back.
- ``return_spike``: a week whose returned units have a robust z-score (median/MAD of the
  SKU's weekly returns since its first sale) of at least ``SPIKE_Z``, at least
  ``MIN_RETURNS`` units above the median week and at least double it, with ``MIN_WEEKS``
  weeks of history; confirmed by a Poisson tail test (Benjamini-Hochberg over every
  SKU-week) so that sparse counts raise no false alarms.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from peewee import fn

from ..orders.models import Order, OrderLine, OrderReturn
from ..timeutil import DAY_MS, format_ms
from .return_reasons import CATEGORIES, classify_return
from .return_stats import benjamini_hochberg, binomial_sf, poisson_sf, robust_z

FDR = 0.05
MIN_RETURNS = 3
SPIKE_Z = 3.5
MIN_WEEKS = 6
CLASSIFY_CHUNK = 2000
WEEK_MS = 7 * DAY_MS
_MONDAY = 3 * DAY_MS  # 1970-01-01 was a Thursday: weeks start on the Monday before


def week_of(ms: int) -> int:
    return (ms + _MONDAY) // WEEK_MS


def week_start_ms(week: int) -> int:
    """The first millisecond (Monday 00:00 UTC) of ``week``."""
    return week * WEEK_MS - _MONDAY


def week_start(week: int) -> str:
    return format_ms(week_start_ms(week))[:10]


def _cohort(query, tenant_id, marketplace, since_ms):
    query = query.where((Order.tenant == tenant_id) & (Order.status != "cancelled"))
    if marketplace:
        query = query.where(Order.marketplace == marketplace)
    if since_ms is not None:
        query = query.where(Order.placed_at >= since_ms)
    return query


def units_sold(
    tenant_id: str,
    marketplace: str | None = None,
    since_ms: int | None = None,
    skus: Iterable[str] | None = None,
) -> dict[str, tuple[int, int | None]]:
    """``{sku: (units, first placed_at)}`` over the cohort's orders."""
    query = (
        OrderLine.select(OrderLine.sku, fn.SUM(OrderLine.quantity), fn.MIN(Order.placed_at))
        .join(Order, on=(OrderLine.order == Order.id))
        .where(OrderLine.tenant == tenant_id)
    )
    if skus is not None:
        query = query.where(OrderLine.sku.in_(list(skus)))
    query = _cohort(query, tenant_id, marketplace, since_ms).group_by(OrderLine.sku)
    return {sku: (int(units or 0), first) for sku, units, first in query.tuples()}


def return_rows(
    tenant_id: str,
    marketplace: str | None = None,
    since_ms: int | None = None,
    skus: Iterable[str] | None = None,
) -> list[tuple]:
    """The cohort's returns, newest first: ``(id, order_id, sku, quantity, reason,
    reason_text, returned_at)``."""
    query = (
        OrderReturn.select(
            OrderReturn.id,
            OrderReturn.order,
            OrderReturn.sku,
            OrderReturn.quantity,
            OrderReturn.reason,
            OrderReturn.reason_text,
            OrderReturn.returned_at,
        )
        .join(Order, on=(OrderReturn.order == Order.id))
        .where(OrderReturn.tenant == tenant_id)
    )
    if skus is not None:
        query = query.where(OrderReturn.sku.in_(list(skus)))
    query = _cohort(query, tenant_id, marketplace, since_ms)
    return list(query.order_by(OrderReturn.returned_at.desc(), OrderReturn.id).tuples())


def classify_rows(
    rows: Sequence[tuple], progress: Callable[[int], None] | None = None
) -> list[tuple[str, float]]:
    """``[(category, confidence)]`` for ``rows`` of ``return_rows``; ``progress(done)``
    after each chunk. Identical (reason, text) pairs are classified once."""
    memo, out = {}, []
    for start in range(0, len(rows), CLASSIFY_CHUNK):
        for row in rows[start : start + CLASSIFY_CHUNK]:
            key = (row[4], row[5])
            found = memo.get(key)
            if found is None:
                found = memo[key] = classify_return(row[4], row[5])
            out.append(found)
        if progress is not None:
            progress(min(start + CLASSIFY_CHUNK, len(rows)))
    return out


# Anomalies --------------------------------------------------------------------------------


def _pct(rate):
    return f"{rate * 100:.1f}%"


def rate_anomalies(
    sold: dict[str, int], returned: dict[str, int], wanted: set[str]
) -> list[dict[str, Any]]:
    """High return rates among ``wanted`` SKUs; the test family is every SKU with sales.

    The baseline of a SKU is the pooled rate of the other SKUs, smoothed by half a return
    per unit ((R - r + 0.5) / (N - n + 1)) so that a store whose other SKUs had no return
    yet does not make every single return significant.
    """
    family = [sku for sku, units in sold.items() if units > 0]
    total_sold = sum(sold[sku] for sku in family)
    total_returned = sum(min(returned.get(sku, 0), sold[sku]) for sku in family)
    tested = []
    for sku in family:
        n = sold[sku]
        r = min(returned.get(sku, 0), n)
        others = total_sold - n
        if others <= 0:
            continue  # a single SKU has nothing to be compared with
        baseline = (total_returned - r + 0.5) / (others + 1)
        tested.append((sku, n, r, baseline, binomial_sf(r, n, baseline)))
    q_values = benjamini_hochberg([t[4] for t in tested])
    anomalies = []
    for (sku, n, r, baseline, p), q in zip(tested, q_values, strict=True):
        rate = r / n
        if sku not in wanted or r < MIN_RETURNS or q > FDR or rate <= baseline:
            continue
        anomalies.append(
            {
                "sku": sku,
                "kind": "high_return_rate",
                "return_rate": round(rate, 4),
                "baseline_rate": round(baseline, 4),
                "score": round(rate / baseline, 2),
                "p_value": float(f"{p:.3g}"),
                "q_value": float(f"{q:.3g}"),
                "units_sold": n,
                "units_returned": r,
                "message": (
                    f"{r} of {n} units returned ({_pct(rate)}) against {_pct(baseline)} for "
                    f"the store's other SKUs (Benjamini-Hochberg q = {q:.2g})."
                ),
            }
        )
    return anomalies


def spike_anomalies(
    rows: Sequence[tuple],
    sold: dict[str, tuple[int, int | None]],
    rates: dict[str, Any],
    baselines: float | None,
    wanted: set[str],
) -> list[dict[str, Any]]:
    """Weeks in which a wanted SKU's returned units spiked.

    A week is a candidate when its robust z-score is at least ``SPIKE_Z`` and it is
    material (at least ``MIN_RETURNS`` units above the median week, and at least double
    it). With sparse counts (a typical week of 0 or 1 return, MAD = 0) the robust z-score
    alone flags ordinary Poisson noise, so a candidate is confirmed by the Poisson tail of
    its count at the rate of the SKU's other weeks ((returns + 0.5) / weeks), with
    Benjamini-Hochberg over every SKU-week examined.
    """
    if not rows:
        return []
    last_week = week_of(max(row[6] for row in rows))
    candidates, examined = _spike_candidates(_weekly_returns(rows, wanted), sold, last_week)
    # the weeks that are no candidate count in the family with p = 1 (conservative)
    q_values = benjamini_hochberg([c.p for c in candidates] + [1.0] * (examined - len(candidates)))
    return [
        _spike_anomaly(candidate, q, rates.get(candidate.sku), baselines)
        for candidate, q in zip(candidates, q_values, strict=False)
        if q <= FDR
    ]


class _SpikeCandidate(NamedTuple):
    """A SKU-week whose returned units stand out, with its Poisson tail ``p``."""

    sku: str
    week: int
    value: int
    z: float
    center: float
    span: int
    p: float


def _weekly_returns(rows, wanted):
    """SKU -> week -> units returned, for the wanted SKUs."""
    weekly = {}
    for row in rows:
        if row[2] in wanted:
            counts = weekly.setdefault(row[2], {})
            week = week_of(row[6])
            counts[week] = counts.get(week, 0) + row[3]
    return weekly


def _spike_candidates(weekly, sold, last_week):
    """The candidate weeks (robust z-score and material) and how many SKU-weeks were
    examined."""
    candidates, examined = [], 0
    for sku, counts in weekly.items():
        first = min(counts)
        if sku in sold and sold[sku][1] is not None:
            first = min(first, week_of(sold[sku][1]))
        weeks = list(range(first, last_week + 1))
        if len(weeks) < MIN_WEEKS:
            continue
        examined += len(weeks)
        values = [counts.get(week, 0) for week in weeks]
        scores, center = robust_z(values)
        total = sum(values)
        for week, value, z in zip(weeks, values, scores, strict=True):
            if value - center < max(MIN_RETURNS, center) or z < SPIKE_Z:
                continue
            rate = (total - value + 0.5) / (len(weeks) - 1)
            candidates.append(
                _SpikeCandidate(sku, week, value, z, center, len(weeks), poisson_sf(value, rate))
            )
    return candidates, examined


def _spike_anomaly(candidate, q, return_rate, baselines):
    """The ``return_spike`` anomaly of a confirmed candidate week."""
    start = week_start(candidate.week)
    return {
        "sku": candidate.sku,
        "kind": "return_spike",
        "return_rate": return_rate,
        "baseline_rate": baselines,
        "score": round(candidate.z, 2),
        "p_value": float(f"{candidate.p:.3g}"),
        "q_value": float(f"{q:.3g}"),
        "week_start": start,
        "week_returns": candidate.value,
        "weekly_median": candidate.center,
        "message": (
            f"{candidate.value} units returned in the week of {start} against a "
            f"median of {candidate.center:g} a week over {candidate.span} weeks."
        ),
    }


# The analysis -----------------------------------------------------------------------------


def analyze_returns(
    tenant_id: str,
    skus: Iterable[str] | None = None,
    marketplace: str | None = None,
    since_ms: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    limit: int = 10_000,
) -> dict[str, Any]:
    """The ``return_classify`` result (DESIGN section 8); ``progress(done, total)`` counts
    the returns classified."""
    sold_first = units_sold(tenant_id, marketplace, since_ms)
    sold = {sku: units for sku, (units, _) in sold_first.items()}
    rows = return_rows(tenant_id, marketplace, since_ms)
    returned = {}
    for row in rows:
        returned[row[2]] = returned.get(row[2], 0) + row[3]
    wanted = set(skus) if skus else set(sold) | set(returned)
    mine = [row for row in rows if row[2] in wanted]
    total = len(mine)
    classes = classify_rows(mine, (lambda done: progress(done, total)) if progress else None)

    categories, per_sku = _category_counts(mine, classes)
    total_sold = sum(sold.values())
    total_returned = sum(min(returned.get(sku, 0), units) for sku, units in sold.items())
    pooled = round(total_returned / total_sold, 4) if total_sold else None
    by_sku = [_sku_summary(sku, sold, returned, per_sku.get(sku, {})) for sku in sorted(wanted)]
    rates = {summary["sku"]: summary["return_rate"] for summary in by_sku}
    anomalies = rate_anomalies(sold, returned, wanted) + spike_anomalies(
        mine, sold_first, rates, pooled, wanted
    )
    anomalies.sort(key=lambda a: (a["kind"] != "high_return_rate", -a["score"], a["sku"]))
    listed = [
        _listed_return(row, category, confidence)
        for row, (category, confidence) in zip(mine[:limit], classes[:limit], strict=True)
    ]
    return {
        "return_count": len(mine),
        "units_sold": sum(sold.get(sku, 0) for sku in wanted),
        "units_returned": sum(returned.get(sku, 0) for sku in wanted),
        "baseline_rate": pooled,
        "categories": categories,
        "returns": listed,
        "returns_truncated": len(mine) > limit,
        "by_sku": by_sku,
        "anomalies": anomalies,
    }


def _category_counts(rows, classes):
    """Returns per category, over all and per SKU."""
    categories = dict.fromkeys(CATEGORIES, 0)
    per_sku = {}
    for row, (category, _) in zip(rows, classes, strict=True):
        categories[category] += 1
        counts = per_sku.setdefault(row[2], {})
        counts[category] = counts.get(category, 0) + 1
    return categories, per_sku


def _sku_summary(sku, sold, returned, counts):
    """A SKU's entry of ``by_sku``: units sold and returned, return rate, categories."""
    units = sold.get(sku, 0)
    back = returned.get(sku, 0)
    top = max(counts, key=lambda c: (counts[c], -CATEGORIES.index(c))) if counts else None
    return {
        "sku": sku,
        "units_sold": units,
        "units_returned": back,
        "return_rate": round(min(back, units) / units, 4) if units else None,
        "top_category": top,
        "categories": {c: counts[c] for c in CATEGORIES if c in counts},
    }


def _listed_return(row, category, confidence):
    """A return of the result's ``returns`` list, with its class."""
    return {
        "id": row[0],
        "order_id": row[1],
        "sku": row[2],
        "quantity": row[3],
        "reason": row[4],
        "category": category,
        "confidence": confidence,
        "returned_at": format_ms(row[6]),
    }
