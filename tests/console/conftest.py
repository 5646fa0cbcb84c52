"""Fixtures of the console's tests: a client signed in with an all-scopes key."""

import pytest

from tests.support.console_support import sign_in
from tests.support.factories import make_key


@pytest.fixture
def console(app, tenant):
    """A test client signed in to the console with an all-scopes key of ``tenant``."""
    client = app.test_client()
    _, secret = make_key(tenant)
    answer = sign_in(client, secret)
    assert answer.status_code == 303, answer.text[:500]
    return client
