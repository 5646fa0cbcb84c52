"""The receiver's answer kept with each attempt (issue 36): the first 4 KiB of its body as
text, its size, binary bodies marked as such; shown by the delivery's detail."""

import pytest

from commerce_api.webhooks.sender import MAX_STORED_BODY_BYTES
from tests.support import webhooks_support
from tests.support.webhooks_support import Receiver, create_webhook, deliver, emit_events

hooks_app = webhooks_support.hooks_app  # the fixture


def _attempts(client, headers, hook):
    listed = client.get(f"/api/webhooks/{hook['id']}/deliveries", headers=headers)
    (delivery,) = listed.get_json()["data"]
    answer = client.get(f"/api/webhooks/{hook['id']}/deliveries/{delivery['id']}", headers=headers)
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()["data"]["attempts"]


def _answered(answers):
    """A receiver answering each request with the next ``(status, body)``."""
    queue = list(answers)

    def respond(record):
        status, body = queue.pop(0) if queue else (200, b"ok")
        return status, {"Content-Type": "text/plain"}, body

    return Receiver(respond=respond)


@pytest.mark.parametrize(
    "body, text, binary",
    [
        (b'{"received": true}', '{"received": true}', False),
        (b"", "", False),
        ("Reçu ☕ <b>merci</b>".encode(), "Reçu ☕ <b>merci</b>", False),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", None, True),
        (b"text with a NUL\x00 byte", None, True),
        (b"\xff\xfe not utf-8", None, True),
        (b"a" * (MAX_STORED_BODY_BYTES - 2) + b"\xff\xfe", None, True),  # not a cut character
    ],
)
def test_the_answer_is_kept_as_text_or_marked_binary(
    hooks_app, client, headers, body, text, binary
):
    with _answered([(200, body)]) as receiver:
        hook = create_webhook(client, headers, receiver.url)
        emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
        deliver(hooks_app)
    (attempt,) = _attempts(client, headers, hook)
    assert attempt["status_code"] == 200
    assert attempt["response_body"] == text
    assert attempt["response_body_binary"] is binary
    assert attempt["response_body_size"] == len(body)


def test_a_long_answer_keeps_its_first_4_kib_and_a_cut_character_is_dropped(
    hooks_app, client, headers
):
    # 4,095 ASCII bytes then a 3-byte character that crosses the bound, then more
    long = b"a" * (MAX_STORED_BODY_BYTES - 1) + "☕".encode() + b"b" * 10_000
    with _answered([(500, long), (200, b"fine")]) as receiver:
        hook = create_webhook(client, headers, receiver.url)
        emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
        deliver(hooks_app)
    failed, succeeded = _attempts(client, headers, hook)
    assert failed["status_code"] == 500 and failed["error"] == "The endpoint answered HTTP 500."
    assert failed["response_body"] == "a" * (MAX_STORED_BODY_BYTES - 1)
    assert failed["response_body_binary"] is False
    assert failed["response_body_size"] == len(long)
    assert succeeded["response_body"] == "fine" and succeeded["error"] is None


def test_no_answer_keeps_no_body(hooks_app, client, headers):
    with Receiver() as receiver:
        url = receiver.url
    hook = create_webhook(client, headers, url)  # nothing listens there any more
    emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
    deliver(hooks_app)
    attempts = _attempts(client, headers, hook)
    assert attempts and attempts[0]["status_code"] is None
    assert attempts[0]["error"].startswith("Connection failed")
    assert attempts[0]["response_body"] is None
    assert attempts[0]["response_body_size"] is None
    assert attempts[0]["response_body_binary"] is None
