"""Output helpers of the ``commerce-api`` command, shared by ``cli.py`` and the domain
``commands.py`` modules."""

import json
import sys

import click

from .errors import ApiError


def emit_json(payload):
    click.echo(json.dumps(payload, default=str))


def fail(message):
    raise click.ClickException(message)


def stop(message):
    """One line on stderr and exit status 2 (the command could not start; nothing done)."""
    click.echo(f"commerce-api: {message}", err=True)
    sys.exit(2)


def run_service(func, *args, **kwargs):
    """Call a service, turning its ApiError into a clean CLI error."""
    try:
        return func(*args, **kwargs)
    except ApiError as error:
        detail = f" {json.dumps(error.details)}" if error.details else ""
        fail(f"{error.code}: {error.message}{detail}")


def emit_rows(rows, as_json, line):
    """Print ``rows`` as one JSON list, or one ``line(row)`` per row."""
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        click.echo(line(row))


def emit(payload, as_json, text):
    """Print ``payload`` as JSON, or ``text`` for a person."""
    if as_json:
        emit_json(payload)
    else:
        click.echo(text)
