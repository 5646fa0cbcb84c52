"""``commerce-api worker``: run the job worker."""

import sys
from typing import NoReturn

import click
from flask import current_app
from flask.cli import with_appcontext

from .. import crypto, tasks
from ..cli_output import stop
from ..db import db
from .worker import Worker

# The worker process's GIL hand-over interval, seconds (Python's default: 0.005). A runner
# holding the queue writers' lock (and SQLite's) gives the GIL up inside every sqlite3 call
# and must get it back to go on; while another runner thread runs Python it would wait up
# to the whole interval, and every dispatch waiting on the lock with it (bench/worker.py:
# ~60 stalls of 2-5 ms per 2,000 jobs). The worker's own process only: the API keeps the
# default.
SWITCH_INTERVAL_SECONDS = 0.0002


def register(cli: click.Group) -> None:
    """Add ``commerce-api worker`` to ``cli``."""

    @cli.command("worker")
    @click.option("--once", is_flag=True, help="Run what is due now, then exit.")
    @click.option(
        "--concurrency",
        type=click.IntRange(1, 64),
        default=None,
        help="Jobs run at once (default COMMERCE_WORKER_CONCURRENCY, 4).",
    )
    @click.option(
        "--poll-interval",
        type=click.FloatRange(0.01, 60),
        default=None,
        help="Seconds between looks for due jobs when nothing signals new work "
        "(default COMMERCE_WORKER_POLL_INTERVAL, 0.5).",
    )
    @with_appcontext
    def worker_command(
        once: bool, concurrency: int | None, poll_interval: float | None
    ) -> NoReturn:
        """Run the job worker (SIGTERM: finish running jobs, then exit)."""
        app = current_app._get_current_object()
        problems = tasks.self_check()
        if problems:  # it would leave jobs, loops or checks of a domain undone
            stop("REGISTRATION_INCOMPLETE: " + "; ".join(problems))
        with db.connection_context():
            keys = crypto.key_check(max_age=0)
        if keys.reads_none:  # it would fail every secret it uses, and write none
            stop(f"SECRET_KEY_MISMATCH: {keys.message()}")
        worker = Worker(app, concurrency=concurrency, poll_interval=poll_interval, once=once)
        previous = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
        try:
            code = worker.run()
        finally:
            sys.setswitchinterval(previous)  # (run in-process: tests, embedding)
        raise SystemExit(code)
