"""What the jobs package registers (``commerce_api.tasks``): its live jobs in the
``ai_jobs`` list totals."""

from ..totals import register_extra
from .enqueue import live_jobs_term


def register() -> None:
    """The tenant's public queued and running jobs count into the ``ai_jobs`` totals."""
    register_extra("ai_jobs", live_jobs_term)
