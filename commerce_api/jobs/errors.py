"""How a job handler reports failure to the worker."""


class JobFailed(Exception):
    """Raised by a handler: the job fails with ``code``; ``retryable`` jobs are tried again."""

    def __init__(self, code, message, retryable=False, details=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.details = details or {}


class JobLost(Exception):
    """Raised by ``ctx.heartbeat()`` when the worker no longer holds the job's lease.

    The lease ran out (the job was returned to the queue or failed with WORKER_TIMEOUT) or
    the worker is giving the job back at shutdown; whatever the handler returns now would
    be refused, so it may as well stop.
    """
