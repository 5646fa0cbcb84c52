"""How a job handler reports failure to the worker."""


class JobFailed(Exception):
    """Raised by a handler: the job fails with ``code``; ``retryable`` jobs are tried again."""

    def __init__(self, code, message, retryable=False, details=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.details = details or {}
