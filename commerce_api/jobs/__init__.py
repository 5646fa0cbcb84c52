"""Asynchronous jobs: the queue, the worker runtime and one handler module per job type."""
