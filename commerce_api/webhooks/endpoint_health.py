"""An endpoint's health, kept as its attempts are recorded: a 410 disables it at once, and
one whose every attempt has failed for ``WEBHOOK_DISABLE_AFTER_DAYS`` is disabled with
``disabled_reason: "failing"`` (``failing_since``: when that unbroken run of failures
began; a success ends it, and so does re-activation)."""

from collections.abc import Iterable

from ..sql import Statement, marks
from .models import WebhookEndpoint
from .types import Attempt

GONE = "The endpoint answered 410 Gone."
FAILING = "failing"

_HEALED = Statement(
    "UPDATE {W} SET {W.failing_since} = NULL"
    " WHERE {W.id} IN ({ids}) AND {W.failing_since} IS NOT NULL",
    W=WebhookEndpoint,
)
_FAILING_SINCE = Statement(
    "UPDATE {W} SET {W.failing_since} = {p} WHERE {W.id} = {p}", W=WebhookEndpoint
)
_STARTS_FAILING = Statement(
    "UPDATE {W} SET {W.failing_since} = {p} WHERE {W.id} = {p} AND {W.failing_since} IS NULL",
    W=WebhookEndpoint,
)
_FAILING_TOO_LONG = Statement(
    "SELECT {W.id} FROM {W} WHERE {W.id} IN ({ids}) AND {W.is_active} = {p}"
    " AND {W.failing_since} <= {p}",
    W=WebhookEndpoint,
)
_DISABLE = Statement(
    "UPDATE {W} SET {W.is_active} = {p}, {W.disabled_reason} = {p}, {W.updated_at} = {p}"
    " WHERE {W.id} = {p} AND {W.is_active} = {p}",
    W=WebhookEndpoint,
)


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
    outcomes: Iterable[Attempt], now: int, disable_after_ms: int | None = None
) -> dict[str, str]:
    """Inside the recording transaction: track failing runs, disable gone and failing
    endpoints; returns ``{endpoint_id: reason}`` of the endpoints disabled now."""
    runs, gone = _runs(outcomes)
    if not runs:
        return {}
    failing = sorted(e for e, (_, first) in runs.items() if first is not None)
    healed = sorted(e for e, (ok, first) in runs.items() if ok and first is None)
    if not failing:  # the common case: one statement, that writes nothing when all is well
        _HEALED.execute(healed, ids=marks(len(healed)))
    else:
        for endpoint_id in sorted(runs):  # one row at a time, in id order: the lock order
            ok, first = runs[endpoint_id]
            if first is None:
                _HEALED.execute((endpoint_id,), ids=marks(1))
            elif ok:
                _FAILING_SINCE.execute((first, endpoint_id))
            else:
                _STARTS_FAILING.execute((first, endpoint_id))  # a run already going stays
    reasons = {endpoint_id: GONE for endpoint_id in gone}
    if failing and disable_after_ms is not None:
        rows = _FAILING_TOO_LONG.execute(
            (*failing, True, now - disable_after_ms), ids=marks(len(failing))
        ).fetchall()
        for (endpoint_id,) in rows:
            reasons.setdefault(endpoint_id, FAILING)
    for endpoint_id in sorted(reasons):
        _DISABLE.execute((False, reasons[endpoint_id], now, endpoint_id, True))
    return {
        endpoint_id: GONE if reason == GONE else "every attempt failed for too long."
        for endpoint_id, reason in reasons.items()
    }
