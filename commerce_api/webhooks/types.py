"""Value types the webhook modules share, apart from the modules that make and use them (as
saleor's ``interface.py``): endpoint health reads attempts that dispatch records, and
neither needs the other's code for that."""

from typing import Protocol


class AttemptedDelivery(Protocol):
    """The delivery an attempt was made for (``dispatch.Claimed``), as health reads it."""

    endpoint_id: str


class Attempt(Protocol):
    """One attempt's result as endpoint health reads it (``dispatch.Outcome``)."""

    delivery: AttemptedDelivery
    attempted_at: int
    status_code: int | None
    sent: bool
    given_back: bool

    @property
    def succeeded(self) -> bool: ...
