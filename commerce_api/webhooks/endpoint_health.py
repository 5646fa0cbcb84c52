"""An endpoint's health, kept as its attempts are recorded: a 410 disables it at once, and
one whose every attempt has failed for ``WEBHOOK_DISABLE_AFTER_DAYS`` is disabled with
``disabled_reason: "failing"`` (``failing_since``: when that unbroken run of failures
began; a success ends it, and so does re-activation)."""

from collections.abc import Iterable

from ..sql import Statement
from .models import WebhookEndpoint
from .types import Attempt

GONE = "The endpoint answered 410 Gone."
FAILING = "failing"

_HEALED = Statement(
    "UPDATE {W} SET {W.failing_since} = NULL"
    " WHERE {W.id} IN ({in:ids}) AND {W.failing_since} IS NOT NULL",
    W=WebhookEndpoint,
)
_FAILING_SINCE = Statement(
    "UPDATE {W} SET {W.failing_since} = {p:since} WHERE {W.id} = {p:id}", W=WebhookEndpoint
)
_STARTS_FAILING = Statement(
    "UPDATE {W} SET {W.failing_since} = {p:since} WHERE {W.id} = {p:id}"
    " AND {W.failing_since} IS NULL",
    W=WebhookEndpoint,
)
_FAILING_TOO_LONG = Statement(
    "SELECT {W.id} FROM {W} WHERE {W.id} IN ({in:ids}) AND {W.is_active} = {p:active}"
    " AND {W.failing_since} <= {p:since}",
    W=WebhookEndpoint,
)
_DISABLE = Statement(
    "UPDATE {W} SET {W.is_active} = {p:inactive}, {W.disabled_reason} = {p:reason},"
    " {W.updated_at} = {p:now} WHERE {W.id} = {p:id} AND {W.is_active} = {p:active}",
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
        _HEALED.execute({"ids": healed})
    else:
        for endpoint_id in sorted(runs):  # one row at a time, in id order: the lock order
            ok, first = runs[endpoint_id]
            if first is None:
                _HEALED.execute({"ids": [endpoint_id]})
            elif ok:
                _FAILING_SINCE.execute({"since": first, "id": endpoint_id})
            else:
                _STARTS_FAILING.execute(
                    {"since": first, "id": endpoint_id}
                )  # a run already going stays
    reasons = {endpoint_id: GONE for endpoint_id in gone}
    if failing and disable_after_ms is not None:
        rows = _FAILING_TOO_LONG.execute(
            {"ids": failing, "active": True, "since": now - disable_after_ms}
        ).fetchall()
        for (endpoint_id,) in rows:
            reasons.setdefault(endpoint_id, FAILING)
    for endpoint_id in sorted(reasons):
        _DISABLE.execute(
            {
                "inactive": False,
                "reason": reasons[endpoint_id],
                "now": now,
                "id": endpoint_id,
                "active": True,
            }
        )
    return {
        endpoint_id: GONE if reason == GONE else "every attempt failed for too long."
        for endpoint_id, reason in reasons.items()
    }
