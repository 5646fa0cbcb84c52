"""Rate budgets: a marketplace's usage plan per connection and operation, fleet-wide.

A real marketplace allows each seller a rate and a burst per operation (Amazon's usage
plans: ``patchListingsItem`` 5/s, burst 5; ``createFeed`` one every two minutes, burst
15...). Every worker process on every host draws from one token bucket per connection and
operation, kept in the database (``marketplace_rate_budget``, a row locked for the
moment of the draw) or in Redis when ``COMMERCE_REDIS_URL`` is set (one Lua script), so
that together they stay within the plan.

A draw *reserves* a token: it answers at once how long the caller must wait before its
call (0: now). The bucket may go below zero by the reservations made; a reservation
further out than the caller may wait is not taken (``BudgetExhausted`` with the wait).
The rate follows what the marketplace says (``adjust``: Amazon's
``x-amzn-RateLimit-Limit``); a 429 empties the bucket (``drain``): the marketplace's
count is the truth. A marketplace that prices each call (Shopify's query cost) draws
``amount`` tokens at once (``reserve_priced``: the points are *in flight* until the
call's answer settles them, and each draw has a number), and says after each call how big
its bucket is, how fast it refills and what is left (``observe``): the bucket takes its
size and rate, and never holds more than the marketplace said was left, less the points
still in flight (a call drawn and not yet answered may reach the marketplace after the
answer's figure was taken: counting its points as left lets the next call through to a
bucket that cannot pay it, docs/decisions.md, stop 45). It holds exactly
that (it may go *up* to it) when the answer is the newest draw's, nothing else is in
flight and nothing else was when it was drawn (its draw's number is 0 otherwise): no call
then spends points the answer does not count. A call drawn before it and answered first
may have reached the marketplace after it (late, then its answer quick), so its answer's
figure would not count that call's points. Otherwise a budget that fell
behind the marketplace (a long wait, a restore rate kept a little lower) would stay behind
for good, and every call would wait for points the marketplace has. A call that got no
answer settles its points (``settle``); in-flight points of a process that died are
forgotten after ``IN_FLIGHT_FORGOTTEN_SECONDS`` without a call.

The budget a connector keeps for a marketplace's bucket (``terms``) runs below it: it
refills ``MARGIN`` slower, and it holds less by what the marketplace restores in
``HEADROOM_SECONDS``. A call's token leaves the budget when the call is sent, but the
marketplace's bucket only when the call arrives, and a bucket at its top restores nothing
meanwhile: calls that arrive late, together with later ones that arrive on time, would
find it empty. The headroom lets a call arrive that late.

An unpriced bucket (``reserve``, ``take``: the connector's plan is the truth, the marketplace
says nothing of its bucket but the rate) takes the caller's size at each draw, so a plan
changed by a release applies to buckets made before it.

``COMMERCE_MARKETPLACE_RATE_BUDGETS=0`` turns the budgets off (each call goes at once).
"""

import functools
import math
import time

from ..config import current_config
from ..db import is_postgres, write_transaction
from ..sql import Statement
from .base import MarketplaceUnavailable
from .models import RateBudget


class BudgetExhausted(Exception):
    """The next token is further out than the caller may wait."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"The rate budget allows the next call in {wait:.1f} s.")
        self.wait = wait

    def unavailable(self, message: str, operation: str) -> MarketplaceUnavailable:
        """The call refused for now (THROTTLED), to be tried again when the budget allows:
        ``message`` says so in the marketplace's terms (``{wait}``: the seconds to wait)."""
        return MarketplaceUnavailable(
            message.replace("{wait}", f"{self.wait:.0f}"),
            code="THROTTLED",
            details={"operation": operation},
            retry_after=max(1, math.ceil(self.wait)),
        )


# the budget refills this much slower than the marketplace's bucket (over any long stretch
# it never gives more than the marketplace restores) ...
MARGIN = 0.95
# ... and holds up to the bucket's size less what the marketplace restores in this time (at
# most half the bucket): how late a call may reach the marketplace after its token was due
HEADROOM_SECONDS = 0.5


def terms(rate: float, size: float, least: float = 0.0) -> tuple[float, float]:
    """(refill rate, size) of the budget kept for a marketplace's bucket that restores
    ``rate`` a second up to ``size``; ``least``: a headroom of at least this much where
    the bucket keeps one whole token beside it."""
    headroom = max(rate * HEADROOM_SECONDS, min(least, size - 1))
    kept = size - min(headroom, size / 2)
    if kept >= 1:
        return rate * MARGIN, kept
    # a bucket of one call cannot be kept smaller (a draw reserves a whole token ahead):
    # the headroom is kept between the calls instead
    return min(rate * MARGIN, 1 / (1 / rate + HEADROOM_SECONDS)), 1.0


# no call lasts longer than this: points still in flight after it were lost with a process
IN_FLIGHT_FORGOTTEN_SECONDS = 300.0

CREATE = Statement(
    "INSERT INTO {RateBudget} ({RateBudget.connection_id}, {RateBudget.operation},"
    " {RateBudget.tokens}, {RateBudget.rate}, {RateBudget.burst}, {RateBudget.updated_at})"
    " VALUES ({p:connection}, {p:operation}, {p:burst}, {p:rate}, {p:burst}, {p:now})"
    " ON CONFLICT DO NOTHING",
    RateBudget=RateBudget,
)
READ = Statement(
    "SELECT {RateBudget.tokens}, {RateBudget.rate}, {RateBudget.burst},"
    " {RateBudget.updated_at}, {RateBudget.in_flight}, {RateBudget.draws} FROM {RateBudget}"
    " WHERE {RateBudget.connection_id} = {p:connection}"
    " AND {RateBudget.operation} = {p:operation}{lock}",
    RateBudget=RateBudget,
)
WRITE = Statement(
    "UPDATE {RateBudget} SET {RateBudget.tokens} = {p:tokens}, {RateBudget.rate} = {p:rate},"
    " {RateBudget.burst} = {p:burst}, {RateBudget.updated_at} = {p:at},"
    " {RateBudget.in_flight} = {p:in_flight}, {RateBudget.draws} = {p:draws}"
    " WHERE {RateBudget.connection_id} = {p:connection} AND {RateBudget.operation} = {p:operation}",
    RateBudget=RateBudget,
)

# KEYS[1]: the bucket; ARGV: rate, burst, now, max wait, mode (take, adjust, drain,
# observe, settle), new rate, amount (take) or what is left (observe), new burst, priced
# (take: 1), settled (observe, settle: the answered call's points), ticket (observe: its
# draw's number), forget after (seconds). Returns {taken, the wait in seconds, number}
# (a priced take: the draw's number, or 0 when other points were in flight: see observe).
REDIS_SCRIPT = """
local b = redis.call('HMGET', KEYS[1], 'tokens', 'rate', 'burst', 'at', 'flight', 'draws')
local rate = tonumber(b[2]) or tonumber(ARGV[1])
local burst = tonumber(b[3]) or tonumber(ARGV[2])
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[4]) or tonumber(ARGV[3])
local flight = tonumber(b[5]) or 0
local draws = tonumber(b[6]) or 0
local now = tonumber(ARGV[3])
if now - at > tonumber(ARGV[12]) then flight = 0 end
if now > at then tokens = math.min(burst, tokens + (now - at) * rate) at = now end
local mode = ARGV[5]
local wait = 0
local taken = 1
local amount = tonumber(ARGV[7]) or 1
local number = draws
if mode == 'take' then
  if ARGV[9] ~= '1' then burst = tonumber(ARGV[2]) tokens = math.min(tokens, burst) end
  wait = math.max(0, (amount - tokens) / rate)
  if wait > tonumber(ARGV[4]) then taken = 0 else
    tokens = tokens - amount
    if ARGV[9] == '1' then
      if flight <= 0 then number = draws + 1 else number = 0 end
      flight = flight + amount draws = draws + 1
    end
  end
elseif mode == 'adjust' then
  rate = tonumber(ARGV[6])
elseif mode == 'drain' then
  tokens = math.min(tokens, 0)
elseif mode == 'observe' or mode == 'settle' then
  flight = math.max(0, flight - tonumber(ARGV[10]))
  if mode == 'observe' then
    rate = tonumber(ARGV[6])
    burst = tonumber(ARGV[8])
    if tonumber(ARGV[11]) == draws and flight <= 0 then
      tokens = math.min(amount, burst)
    else
      tokens = math.min(tokens, amount - flight, burst)
    end
  end
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'rate', tostring(rate),
  'burst', tostring(burst), 'at', tostring(at), 'flight', tostring(flight),
  'draws', tostring(draws))
redis.call('EXPIRE', KEYS[1], 86400)
return {taken, tostring(wait), number}
"""


def enabled() -> bool:
    return bool(current_config().get("MARKETPLACE_RATE_BUDGETS", True))


@functools.lru_cache(maxsize=4)
def _redis(url):
    import redis  # the optional extra (config.check_drivers says so when missing)

    client = redis.Redis.from_url(url)
    return client, client.register_script(REDIS_SCRIPT)


def _redis_call(url, key, rate, burst, max_wait, mode, new_rate, amount, new_burst, extra):
    _, script = _redis(url)
    priced, settled, ticket = extra
    taken, wait, number = script(
        keys=[f"commerce:budget:{key}"],
        args=[
            rate,
            burst,
            time.time(),
            max_wait,
            mode,
            new_rate,
            amount,
            new_burst or burst,
            "1" if priced else "0",
            settled,
            ticket,
            IN_FLIGHT_FORGOTTEN_SECONDS,
        ],
    )
    return bool(int(taken)), float(wait), int(number)


def _db_call(
    connection_id, operation, rate, burst, max_wait, mode, new_rate, amount, new_burst, extra
):
    priced, settled, ticket = extra
    now = time.time()
    with write_transaction():
        key = {"connection": connection_id, "operation": operation}
        CREATE.execute({**key, "burst": float(burst), "rate": float(rate), "now": now})
        lock = " FOR UPDATE" if is_postgres() else ""
        tokens, stored_rate, stored_burst, at, flight, draws = READ.execute(
            key, lock=lock
        ).fetchone()
        if now - at > IN_FLIGHT_FORGOTTEN_SECONDS:
            flight = 0.0
        if now > at:
            tokens = min(stored_burst, tokens + (now - at) * stored_rate)
            at = now
        wait, taken, number = 0.0, True, draws
        if mode == "take":
            if not priced:  # the connector's plan is the truth: its size applies at once
                stored_burst = float(burst)
                tokens = min(tokens, stored_burst)
            wait = max(0.0, (amount - tokens) / stored_rate)
            if wait > max_wait:
                taken = False
            else:
                tokens -= amount
                if priced:  # drawn alone: its answer may count every charge (observe)
                    number = draws + 1 if flight <= 0 else 0
                    flight, draws = flight + amount, draws + 1
        elif mode == "adjust":
            stored_rate = new_rate
        elif mode == "drain":
            tokens = min(tokens, 0.0)
        elif mode in ("observe", "settle"):
            flight = max(0.0, flight - settled)
            if mode == "observe":
                stored_rate, stored_burst = new_rate, float(new_burst)
                if ticket == draws and flight <= 0:
                    tokens = min(amount, stored_burst)  # nothing else out: exactly what is left
                else:  # what is left, less what may still reach the marketplace
                    tokens = min(tokens, amount - flight, stored_burst)
        WRITE.execute(
            {
                **key,
                "tokens": tokens,
                "rate": stored_rate,
                "burst": stored_burst,
                "at": at,
                "in_flight": flight,
                "draws": draws,
            }
        )
    return taken, wait, number


def _call(
    connection_id,
    operation,
    rate,
    burst,
    max_wait,
    mode,
    new_rate=0.0,
    amount=1.0,
    new_burst=0,
    extra=(False, 0.0, 0),
):
    url = current_config().get("REDIS_URL")
    args = (rate, burst, max_wait, mode, new_rate, amount, new_burst, extra)
    if url:
        return _redis_call(url, f"{connection_id}:{operation}", *args)
    return _db_call(connection_id, operation, *args)


def reserve(
    connection_id: str,
    operation: str,
    rate: float,
    burst: float,
    max_wait: float,
    amount: float = 1.0,
) -> float:
    """Take ``amount`` tokens of the bucket (created with ``rate`` and ``burst`` on first
    use); returns the seconds to wait before the call. Raises ``BudgetExhausted`` when
    that is more than ``max_wait`` (nothing taken)."""
    if not enabled():
        return 0.0
    taken, wait, _ = _call(connection_id, operation, rate, burst, max_wait, "take", amount=amount)
    if not taken:
        raise BudgetExhausted(wait)
    return wait


def reserve_priced(
    connection_id: str,
    operation: str,
    rate: float,
    burst: float,
    max_wait: float,
    amount: float,
) -> tuple[float, int]:
    """``reserve`` a priced call's points, in flight until its answer (``observe``) or its
        failure (``settle``) settles them; returns (the seconds to wait, the draw's number: 0
    when other points were in flight, so that its answer never sets the bucket exactly)."""
    if not enabled():
        return 0.0, 0
    taken, wait, ticket = _call(
        connection_id,
        operation,
        rate,
        burst,
        max_wait,
        "take",
        amount=amount,
        extra=(True, 0.0, 0),
    )
    if not taken:
        raise BudgetExhausted(wait)
    return wait, ticket


def settle(connection_id: str, operation: str, rate: float, burst: float, amount: float) -> None:
    """A priced call drawn with ``reserve_priced`` got no answer: its points are out no more
    (the marketplace may have charged them; its next answer says)."""
    if enabled():
        _call(connection_id, operation, rate, burst, 0.0, "settle", extra=(False, amount, 0))


def take(
    connection_id: str,
    operation: str,
    rate: float,
    burst: float,
    max_wait: float,
    amount: float = 1.0,
) -> None:
    """``reserve`` tokens, then wait until they are due."""
    wait = reserve(connection_id, operation, rate, burst, max_wait, amount)
    if wait > 0:
        time.sleep(wait)


def observe(
    connection_id: str,
    operation: str,
    rate: float,
    burst: float,
    new_rate: float,
    new_burst: float,
    left: float,
    settled: float = 0.0,
    ticket: int | None = None,
) -> None:
    """The marketplace says its bucket holds ``new_burst`` and refills at ``new_rate``
    per second, and that ``left`` is available now (Shopify's ``throttleStatus``), in its
    answer to the call drawn as ``ticket`` with ``settled`` points (``reserve_priced``)."""
    if enabled() and new_rate > 0 and new_burst > 0:
        _call(
            connection_id,
            operation,
            rate,
            burst,
            0.0,
            "observe",
            new_rate,
            amount=left,
            new_burst=new_burst,
            extra=(False, settled, -1 if ticket is None else ticket),
        )


def adjust(connection_id: str, operation: str, rate: float, burst: float, new_rate: float) -> None:
    """The marketplace says the rate is ``new_rate`` now (``x-amzn-RateLimit-Limit``)."""
    if enabled() and new_rate > 0:
        _call(connection_id, operation, rate, burst, 0.0, "adjust", new_rate)


def drain(connection_id: str, operation: str, rate: float, burst: float) -> None:
    """The marketplace answered 429: nothing is left in the bucket now."""
    if enabled():
        _call(connection_id, operation, rate, burst, 0.0, "drain")
