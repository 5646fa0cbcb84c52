"""What the runner pool and the periodic runs need of their worker: its settings and the
few calls they make back (saleor's service factories: collaborators passed in, not
reached for). The worker builds one; neither part sees the ``Worker`` itself."""

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask


@dataclass(frozen=True)
class WorkerHandle:
    """A worker's settings and callbacks, as its runners and periodic runs use them."""

    id: str
    app: Flask
    lease_seconds: float
    lease_ms: int
    poll_interval: float
    max_abandoned: int  # hung runner threads tolerated before ``exit_hung``
    stopping: threading.Event  # set: claim nothing new, finish, exit
    wake: Callable[[], None]  # cut the main loop's sleep short
    exit_hung: Callable[[int], None]  # too many runners hung: stop with EXIT_HUNG
    guard: Callable[..., Any]  # run a main-loop step; a failure is logged (None)
