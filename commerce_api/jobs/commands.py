"""``commerce-api worker``: run the job worker."""

import click
from flask import current_app
from flask.cli import with_appcontext

from .worker import Worker


def register(cli):
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
    def worker_command(once, concurrency, poll_interval):
        """Run the job worker (SIGTERM: finish running jobs, then exit)."""
        app = current_app._get_current_object()
        worker = Worker(app, concurrency=concurrency, poll_interval=poll_interval, once=once)
        raise SystemExit(worker.run())
