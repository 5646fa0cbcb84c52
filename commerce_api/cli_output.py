"""Output helpers of the ``commerce-api`` command, shared by ``cli.py`` and the domain
``commands.py`` modules."""

import json

import click

from .errors import ApiError


def emit_json(payload):
    click.echo(json.dumps(payload, default=str))


def fail(message):
    raise click.ClickException(message)


def run_service(func, *args, **kwargs):
    """Call a service, turning its ApiError into a clean CLI error."""
    try:
        return func(*args, **kwargs)
    except ApiError as error:
        detail = f" {json.dumps(error.details)}" if error.details else ""
        fail(f"{error.code}: {error.message}{detail}")
