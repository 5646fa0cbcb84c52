"""Test-only job type (``ENABLE_TEST_JOBS``): does nothing but say when it started (the
worker benchmark measures dispatch-to-start latency with it)."""

import time

import marshmallow as ma

TIMEOUT_SECONDS = 60


class PARAMS_SCHEMA(ma.Schema):  # noqa: N801 (the handler contract's name)
    class Meta:
        unknown = ma.RAISE


def run(job, ctx):
    return {"started_at": time.time()}
