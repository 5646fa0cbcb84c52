"""The one Retry-After parser (commerce_api/retry_after.py) and its callers' bounds."""

import email.utils

import pytest

from commerce_api.marketplaces.http_connector import _retry_after as connector_retry_after
from commerce_api.retry_after import parse_retry_after

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it

NOW = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        (" 120 ", 120.0),
        ("0", 0.0),
        ("1.5", 1.5),
        ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
        ("Wed, 21 Oct 2015 07:28:10 -0000", 10.0),  # no zone: UTC
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # a date past: now
    ],
)
def test_delta_seconds_and_http_dates(value, seconds):
    assert parse_retry_after(value, now=NOW) == seconds


@pytest.mark.parametrize(
    "value", [None, "", "soon", "-3", "+5", "inf", "nan", "1e3", "Wed, 99 Foo 2015", "7 s"]
)
def test_junk_is_none(value):
    assert parse_retry_after(value, now=NOW) is None


def test_the_clock_is_now_by_default():
    value = email.utils.formatdate(NOW + 10**9, usegmt=True)  # far ahead of any clock
    assert parse_retry_after(value) > 0


def test_the_marketplace_connector_takes_whole_seconds_within_an_hour():
    assert connector_retry_after("7") == 7
    assert connector_retry_after("0") == 1
    assert connector_retry_after("86400") == 3600
    assert connector_retry_after("2.2") == 3
    assert connector_retry_after(None) is None and connector_retry_after("soon") is None
    later = email.utils.formatdate(NOW + 10**9, usegmt=True)
    assert connector_retry_after(later) == 3600  # an HTTP date too (capped)
