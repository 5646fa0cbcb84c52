"""The console's housekeeping, run by the worker fleet (``jobs.registry.periodic``)."""

from ..jobs.registry import periodic, register_marked
from ..timeutil import now_ms
from . import sessions

PURGE_INTERVAL_SECONDS = 3600
KEEP_ENDED_MS = 7 * 86_400_000  # an ended session's row is kept a week (who signed in when)


@periodic("console_session_purge", PURGE_INTERVAL_SECONDS)
def purge_console_sessions() -> int:
    """Delete sessions (and abandoned provider sign-ins) that ended over a week ago."""
    return sessions.purge_ended(now_ms() - KEEP_ENDED_MS)


def register() -> None:
    """Register this domain's background work and checks (``commerce_api.tasks``)."""
    register_marked(__name__)
