"""An endpoint's health, kept as its attempts are recorded: a 410 disables it at once, and
one whose every attempt has failed for ``WEBHOOK_DISABLE_AFTER_DAYS`` is disabled with
``disabled_reason: "failing"`` (``failing_since``: when that unbroken run of failures
began; a success ends it, and so does re-activation)."""

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..db import db

if TYPE_CHECKING:
    from .dispatch import Outcome  # dispatch imports this module

GONE = "The endpoint answered 410 Gone."
FAILING = "failing"


def _runs(outcomes):
    """Per endpoint: (had a success, the first failure after the last success or None)."""
    runs, gone = {}, set()
    for outcome in sorted(outcomes, key=lambda o: o.attempted_at):
        if not outcome.sent or outcome.given_back:
            continue
        endpoint_id = outcome.delivery.endpoint_id
        succeeded, first = runs.get(endpoint_id, (False, None))
        if outcome.succeeded:
            runs[endpoint_id] = (True, None)
            continue
        if outcome.status_code == 410:
            gone.add(endpoint_id)
        runs[endpoint_id] = (succeeded, first if first is not None else outcome.attempted_at)
    return runs, gone


def update(
    outcomes: Iterable["Outcome"], now: int, disable_after_ms: int | None = None
) -> dict[str, str]:
    """Inside the recording transaction: track failing runs, disable gone and failing
    endpoints; returns ``{endpoint_id: reason}`` of the endpoints disabled now."""
    p = db.param
    runs, gone = _runs(outcomes)
    if not runs:
        return {}
    failing = sorted(e for e, (_, first) in runs.items() if first is not None)
    healed = sorted(e for e, (ok, first) in runs.items() if ok and first is None)
    if not failing:  # the common case: one statement, that writes nothing when all is well
        marks = ", ".join([p] * len(healed))
        db.execute_sql(
            "UPDATE webhook_endpoint SET failing_since = NULL"
            f" WHERE id IN ({marks}) AND failing_since IS NOT NULL",
            healed,
        )
    else:
        for endpoint_id in sorted(runs):  # one row at a time, in id order: the lock order
            ok, first = runs[endpoint_id]
            if first is None:
                sql = f"UPDATE webhook_endpoint SET failing_since = NULL WHERE id = {p}"
                sql += " AND failing_since IS NOT NULL"
                params = (endpoint_id,)
            else:
                sql = f"UPDATE webhook_endpoint SET failing_since = {p} WHERE id = {p}"
                if not ok:
                    sql += " AND failing_since IS NULL"  # a run already going stays
                params = (first, endpoint_id)
            db.execute_sql(sql, params)
    reasons = {endpoint_id: GONE for endpoint_id in gone}
    if failing and disable_after_ms is not None:
        marks = ", ".join([p] * len(failing))
        rows = db.execute_sql(
            f"SELECT id FROM webhook_endpoint WHERE id IN ({marks}) AND is_active = {p}"
            f" AND failing_since <= {p}",
            (*failing, True, now - disable_after_ms),
        ).fetchall()
        for (endpoint_id,) in rows:
            reasons.setdefault(endpoint_id, FAILING)
    for endpoint_id in sorted(reasons):
        db.execute_sql(
            f"UPDATE webhook_endpoint SET is_active = {p}, disabled_reason = {p},"
            f" updated_at = {p} WHERE id = {p} AND is_active = {p}",
            (False, reasons[endpoint_id], now, endpoint_id, True),
        )
    return {
        endpoint_id: GONE if reason == GONE else "every attempt failed for too long."
        for endpoint_id, reason in reasons.items()
    }
