"""Outbound-address safety (``netguard``), shared by webhooks and the http connector:
the table of refused addresses, and DNS rebinding between check and connect."""

import socket

import pytest
import requests
import urllib3.util.connection

from commerce_api import netguard
from commerce_api.marketplaces import http_connector
from commerce_api.webhooks.models import WebhookDelivery
from tests.support import webhooks_support
from tests.support.webhooks_support import Receiver, create_webhook, deliver, emit_events

hooks_app = webhooks_support.hooks_app

REFUSED = [
    "127.0.0.1",
    "127.255.255.254",
    "0.0.0.0",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # CGNAT
    "100.127.255.254",
    "192.0.0.8",
    "192.0.2.10",  # documentation
    "198.18.0.1",  # benchmarking
    "224.0.0.251",  # multicast
    "239.255.255.250",
    "240.0.0.1",  # reserved
    "255.255.255.255",
    "::",
    "::1",
    "fe80::1",
    "fe80::1%lo",
    "fc00::1",
    "fd00:ec2::254",
    "ff02::1",
    "ff0e::1",
    "2001:db8::1",
    "100::1",  # discard-only
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:100.64.0.1",
    "::7f00:1",  # IPv4-compatible (deprecated)
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b::c0a8:101",  # NAT64 of 192.168.1.1
    "64:ff9b:1::808:808",  # local-use NAT64
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
]
ALLOWED = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:82a::200e",
    "::ffff:8.8.8.8",
    "2002:808:808::1",  # 6to4 of a public address
    "64:ff9b::808:808",  # NAT64 of a public address
]


@pytest.mark.parametrize("address", REFUSED)
def test_refused_addresses(address):
    assert not netguard.is_public_address(address)


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses(address):
    assert netguard.is_public_address(address)


def test_a_host_is_refused_when_any_of_its_addresses_is(monkeypatch):
    answers = {"mixed.test": ["93.184.216.34", "10.0.0.5"], "public.test": ["93.184.216.34"]}
    monkeypatch.setattr(netguard, "resolve", lambda host, port: answers[host])
    with pytest.raises(netguard.AddressNotAllowed):
        netguard.check_public_host("mixed.test")
    netguard.check_public_host("public.test")
    assert netguard.checked_addresses("mixed.test", 80, allow_private=True) == answers["mixed.test"]


class Rebinding:
    """A resolver for ``rebind.test`` that answers a public address first and loopback
    afterwards (the attacker's DNS); every other name resolves as usual. Connections to
    anything but loopback are refused and recorded, so nothing leaves the machine."""

    PUBLIC = "93.184.216.34"

    def __init__(self, monkeypatch):
        self.calls = 0
        self.connects = []
        self._getaddrinfo = socket.getaddrinfo
        self._connect = urllib3.util.connection.create_connection
        monkeypatch.setattr(socket, "getaddrinfo", self.getaddrinfo)
        monkeypatch.setattr(urllib3.util.connection, "create_connection", self.create_connection)

    def getaddrinfo(self, host, port, *args, **kwargs):
        if host != "rebind.test":
            return self._getaddrinfo(host, port, *args, **kwargs)
        self.calls += 1
        address = self.PUBLIC if self.calls == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port or 0))]

    def create_connection(self, address, *args, **kwargs):
        self.connects.append(address[0])
        if address[0] == "127.0.0.1":
            return self._connect(address, *args, **kwargs)
        raise ConnectionRefusedError(f"test: no route to {address[0]}")


def test_guarded_request_connects_to_the_checked_address(monkeypatch):
    with Receiver() as receiver:
        port = receiver.server.server_address[1]
        rebinding = Rebinding(monkeypatch)
        with pytest.raises(requests.ConnectionError):
            netguard.request("POST", f"http://rebind.test:{port}/hooks", data=b"{}", timeout=2)
        assert rebinding.calls == 1  # resolved once: the check and the connection agree
        assert rebinding.connects == [Rebinding.PUBLIC]
        assert receiver.requests == []
        # the next request resolves again and now sees loopback: refused before connecting
        with pytest.raises(netguard.AddressNotAllowed):
            netguard.request("POST", f"http://rebind.test:{port}/hooks", data=b"{}", timeout=2)
        assert rebinding.connects == [Rebinding.PUBLIC]
        assert receiver.requests == []


def test_pinned_request_keeps_the_host_header(monkeypatch):
    with Receiver() as receiver:
        port = receiver.server.server_address[1]
        calls = []

        def resolver(host, port_):
            calls.append(host)
            return ["127.0.0.1"]

        monkeypatch.setattr(netguard, "resolve", resolver)
        response = netguard.request(
            "POST", f"http://hooks.customer.test:{port}/in", data=b"{}", allow_private=True
        )
        assert response.status_code == 200
        assert calls == ["hooks.customer.test"]
        assert receiver.requests[0]["headers"]["Host"] == f"hooks.customer.test:{port}"


def test_webhook_delivery_never_reaches_loopback_through_rebinding(
    hooks_app, client, headers, monkeypatch
):
    with Receiver() as receiver:
        port = receiver.server.server_address[1]
        hook = create_webhook(client, headers, f"http://rebind.test:{port}/hooks")
        emit_events(headers["X-Tenant-ID"], [("order.created", "ord_1", {})])
        hooks_app.config["WEBHOOK_ALLOW_PRIVATE_TARGETS"] = False
        hooks_app.config["WEBHOOK_RETRY_SCHEDULE"] = "0"
        rebinding = Rebinding(monkeypatch)
        deliver(hooks_app)
        assert receiver.requests == []
        assert "127.0.0.1" not in rebinding.connects
        assert rebinding.connects == [Rebinding.PUBLIC]  # first attempt: the pinned address
    delivery = WebhookDelivery.get(WebhookDelivery.endpoint_id == hook["id"])
    assert delivery.status == "failed" and delivery.attempt_count == 2
    # the second attempt resolved to loopback and was refused before any connection
    assert "private, loopback or reserved" in delivery.last_error


def test_the_http_connector_uses_the_same_guard(monkeypatch):
    assert http_connector.netguard is netguard
    with Receiver() as receiver:
        port = receiver.server.server_address[1]
        rebinding = Rebinding(monkeypatch)

        class Connection:
            id = "mkc_1"
            marketplace = "shop"
            base_url = f"http://rebind.test:{port}"
            api_token = None
            allow_private = False

        connector = http_connector.HttpConnector(Connection())
        monkeypatch.setattr(connector, "_timeouts", lambda: (2, 2))
        with pytest.raises(http_connector.MarketplaceUnavailable) as first:
            connector.fetch_inventory()
        assert first.value.code == "CONNECTION_FAILED"
        with pytest.raises(http_connector.MarketplaceUnavailable) as second:
            connector.fetch_inventory()
        assert second.value.code == "TARGET_NOT_ALLOWED"
        assert rebinding.connects == [Rebinding.PUBLIC]
        assert receiver.requests == []
