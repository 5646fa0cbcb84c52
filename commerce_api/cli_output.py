"""Output helpers of the ``commerce-api`` command, shared by ``cli.py`` and the domain
``commands.py`` modules."""

import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from .errors import ApiError


def print_json(payload: Any) -> None:
    """Print ``payload`` as one line of JSON."""
    click.echo(json.dumps(payload, default=str))


def fail(message: str) -> NoReturn:
    """Stop the command with ``Error: message`` (exit status 1)."""
    raise click.ClickException(message)


def stop(message: str) -> NoReturn:
    """One line on stderr and exit status 2 (the command could not start; nothing done)."""
    click.echo(f"commerce-api: {message}", err=True)
    sys.exit(2)


def call_service(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a service (a domain function), turning its ApiError into a clean CLI error."""
    try:
        return func(*args, **kwargs)
    except ApiError as error:
        detail = f" {json.dumps(error.details)}" if error.details else ""
        fail(f"{error.code}: {error.message}{detail}")


def print_rows(rows: list, as_json: bool, line: Callable[[Any], str]) -> None:
    """Print ``rows`` as one JSON list, or one ``line(row)`` per row."""
    if as_json:
        print_json(rows)
        return
    for row in rows:
        click.echo(line(row))


def print_result(payload: Any, as_json: bool, text: str) -> None:
    """Print ``payload`` as JSON, or ``text`` for a person."""
    if as_json:
        print_json(payload)
    else:
        click.echo(text)
