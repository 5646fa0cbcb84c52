"""The one polling helper of the tests."""

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(predicate: Callable[[], T], timeout: float = 20.0, interval: float = 0.05) -> T:
    """Poll ``predicate()`` until it returns something true and return that; after ``timeout``
    seconds return its last (false) answer. Callers assert on it: ``assert wait_for(...)``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()
