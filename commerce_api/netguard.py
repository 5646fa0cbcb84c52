"""Outbound-address safety: where the service may send requests (webhooks, connectors).

A URL given by a customer must not make the service reach its own network (SSRF). The
host is resolved once, every address it resolves to is checked, and the connection is
made to the checked address itself, so a second DNS answer (rebinding) between check and
connect cannot redirect it. For https the TLS handshake still uses the hostname: SNI and
certificate checks are made against the name, not the pinned address.

Refused: loopback, private (RFC 1918, ULA), link-local, site-local fec0::/10, CGNAT
100.64.0.0/10, multicast, reserved, unspecified, documentation (3fff::/20 too) and
benchmark ranges, the 6to4 relay anycast 192.88.99.0/24, IPv4-mapped, 6to4 and NAT64 forms
of any of those, local-use NAT64, Teredo and the deprecated IPv4-compatible form.
``allow_private=True`` (an operator's choice: on-premise receivers, tests) skips the check
but still pins the resolved address.
"""

import contextlib
import heapq
import ipaddress
import socket
import threading
import time
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

DEFAULT_PORTS = {"http": 80, "https": 443}
# refused although some Python versions call parts of them global
_EXTRA_REFUSED_V4 = (
    ipaddress.ip_network("100.64.0.0/10"),  # CGNAT (shared address space)
    ipaddress.ip_network("192.0.0.0/24"),  # IETF protocol assignments
    ipaddress.ip_network("192.88.99.0/24"),  # deprecated 6to4 relay anycast (RFC 7526)
)
_EXTRA_REFUSED_V6 = (
    ipaddress.ip_network("fec0::/10"),  # site-local (deprecated, RFC 3879): a local network
    ipaddress.ip_network("3fff::/20"),  # documentation (RFC 9637)
)
_6TO4 = ipaddress.ip_network("2002::/16")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # well-known prefix: the last 32 bits are IPv4
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # local-use translation: never public


class AddressNotAllowed(ValueError):
    """The host resolves to an address the service must not reach."""


class HostNotResolved(requests.exceptions.ConnectionError, ValueError):
    """The host does not resolve (a connection failure, and a bad address at check time)."""


def is_public_address(address):
    """True when ``address`` (text or ip_address) is a public unicast address."""
    ip = ipaddress.ip_address(address.split("%")[0] if isinstance(address, str) else address)
    if ip.version == 6:
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            return is_public_address(embedded)
        if ip in _NAT64_LOCAL or ip.teredo is not None:
            return False  # local translation; a Teredo tunnel leads wherever its client is
        if any(ip in network for network in _EXTRA_REFUSED_V6):
            return False
    elif any(ip in network for network in _EXTRA_REFUSED_V4):
        return False
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )


def _embedded_ipv4(ip):
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, NAT64), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _6TO4:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def resolve(host, port):
    """Every address ``host`` resolves to, in the resolver's order (IP literals too)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise HostNotResolved(f"The host {host} does not resolve.") from exc
    addresses = []
    for info in infos:
        address = info[4][0]
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise HostNotResolved(f"The host {host} does not resolve.")
    return addresses


def checked_addresses(host, port=None, allow_private=False):
    """Resolve ``host`` once; raise AddressNotAllowed unless every address is public."""
    addresses = resolve(host, port)
    if not allow_private:
        refused = [a for a in addresses if not is_public_address(a)]
        if refused:
            raise AddressNotAllowed(
                f"The host {host} resolves to a private, loopback or reserved address."
            )
    return addresses


def check_public_host(host):
    """Raise ValueError (AddressNotAllowed, HostNotResolved) unless ``host`` is public."""
    checked_addresses(host)


def check_url(url, allow_private=False):
    """Check an http(s) URL's host; returns its addresses. Raises ValueError subclasses."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise AddressNotAllowed("Only http(s) URLs with a host can be reached.")
    return checked_addresses(parts.hostname, _port(parts), allow_private)


def _port(parts):
    try:
        return parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError:
        raise AddressNotAllowed("The URL's port is not valid.") from None


# A hard limit on the whole exchange ---------------------------------------------------------

_limits = threading.local()


class _Watchdog:
    """One thread per process that strikes expired limits (a Timer thread per request
    would cost a thread start per delivery)."""

    def __init__(self):
        self._heap = []
        self._cond = threading.Condition()
        self._thread = None
        self._counter = 0

    def add(self, deadline, limit):
        with self._cond:
            self._counter += 1
            heapq.heappush(self._heap, (deadline, self._counter, limit))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="netguard-watchdog")
                self._thread.daemon = True
                self._thread.start()
            elif self._heap[0][2] is limit:
                self._cond.notify()

    def _run(self):
        while True:
            with self._cond:
                while not self._heap:
                    self._cond.wait()
                deadline, _, limit = self._heap[0]
                wait = deadline - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)
            if not limit.done:
                limit.strike()


_watchdog = _Watchdog()


class _Limit:
    __slots__ = ("sockets", "lock", "expired", "done")

    def __init__(self):
        self.sockets = []
        self.lock = threading.Lock()
        self.expired = threading.Event()
        self.done = False

    def strike(self):
        with self.lock:
            if self.done:
                return
            self.expired.set()
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def time_limit(seconds):
    """Shut the sockets a request of this thread uses once ``seconds`` have passed.

    requests' time-outs bound each socket operation, not the exchange: a receiver that
    trickles a byte every few seconds would hold a sending thread for as long as it likes.
    Yields an Event that is set when the limit struck.
    """
    limit = _Limit()
    _limits.current = limit
    _watchdog.add(time.monotonic() + seconds, limit)
    try:
        yield limit.expired
    finally:
        with limit.lock:
            limit.done = True
        _limits.current = None


def _watch(sock):
    limit = getattr(_limits, "current", None)
    if limit is None or sock is None:
        return
    with limit.lock:
        limit.sockets.append(sock)
        if limit.expired.is_set():
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _WatchedHTTPConnection(HTTPConnection):
    def connect(self):
        super().connect()
        _watch(self.sock)

    def request(self, *args, **kwargs):
        _watch(self.sock)  # a kept-alive connection: already connected
        return super().request(*args, **kwargs)


class _WatchedHTTPSConnection(HTTPSConnection):
    def connect(self):
        super().connect()
        _watch(self.sock)

    def request(self, *args, **kwargs):
        _watch(self.sock)
        return super().request(*args, **kwargs)


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class PinnedAdapter(HTTPAdapter):
    """A transport adapter that resolves and checks the host, then connects to that address.

    The connection pool is keyed by the pinned address and the hostname, so keep-alive
    connections are reused only for the same checked address. ``Host``, SNI and the
    certificate check use the hostname.
    """

    def __init__(self, allow_private=False, **kwargs):
        self.allow_private = allow_private
        super().__init__(**kwargs)

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}

    def send(self, request, **kwargs):
        parts = urlsplit(request.url)
        if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
            raise AddressNotAllowed("Only http(s) URLs with a host can be reached.")
        port = _port(parts)
        addresses = checked_addresses(parts.hostname, port, self.allow_private)
        request.pinned_address = addresses[0]
        host = parts.hostname
        host_header = f"[{host}]" if ":" in host else host
        if port != DEFAULT_PORTS[parts.scheme]:
            host_header += f":{port}"
        request.headers["Host"] = host_header
        kwargs["proxies"] = {}  # a proxy would connect to the name, not the checked address
        return super().send(request, **kwargs)

    def build_connection_pool_key_attributes(self, request, verify, cert=None):
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        pinned = getattr(request, "pinned_address", None)
        if pinned is None:  # only send() calls this adapter's pools
            raise AddressNotAllowed("The request was not checked.")
        hostname = host_params["host"]
        host_params["host"] = pinned
        if host_params["scheme"] == "https":
            pool_kwargs["server_hostname"] = hostname
            pool_kwargs["assert_hostname"] = hostname
        return host_params, pool_kwargs


class GuardedPoolManager:
    """A keep-alive urllib3 client with the same guard as PinnedAdapter, for hot paths
    (webhook delivery): about half the CPU of a requests Session per request.

    ``post(url, body, headers, timeout)`` resolves and checks the host, then sends to the
    checked address through a pool keyed by (address, port, hostname); no redirects, no
    retries, no proxies. Returns the urllib3 response, unread (``preload_content=False``).
    """

    def __init__(self, allow_private=False, maxsize=4):
        self.allow_private = allow_private
        self.manager = urllib3.PoolManager(num_pools=50, maxsize=maxsize)
        self.manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}

    def post(self, url, body, headers, timeout):
        parts = urlsplit(url)
        if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
            raise AddressNotAllowed("Only http(s) URLs with a host can be reached.")
        port = _port(parts)
        pinned = checked_addresses(parts.hostname, port, self.allow_private)[0]
        host = parts.hostname
        host_header = f"[{host}]" if ":" in host else host
        if port != DEFAULT_PORTS[parts.scheme]:
            host_header += f":{port}"
        pool_kwargs = {}
        if parts.scheme == "https":
            pool_kwargs = {"server_hostname": host, "assert_hostname": host}
        pool = self.manager.connection_from_host(
            pinned, port, parts.scheme, pool_kwargs=pool_kwargs
        )
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return pool.urlopen(
            "POST",
            path,
            body=body,
            headers={**headers, "Host": host_header},
            redirect=False,
            retries=False,
            timeout=urllib3.Timeout(connect=timeout, read=timeout),
            preload_content=False,
            assert_same_host=False,
        )

    def clear(self):
        self.manager.clear()


def guarded_session(allow_private=False, pool_maxsize=10):
    """A requests Session whose every request goes through a PinnedAdapter (no proxies,
    no environment settings, no redirects unless the caller asks)."""
    session = requests.Session()
    session.trust_env = False
    adapter = PinnedAdapter(allow_private=allow_private, pool_maxsize=pool_maxsize)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def request(method, url, *, allow_private=False, **kwargs):
    """One guarded request, like ``requests.request`` (redirects off unless asked)."""
    kwargs.setdefault("allow_redirects", False)
    session = guarded_session(allow_private)
    try:
        response = session.request(method, url, **kwargs)
    except BaseException:
        session.close()
        raise
    if not kwargs.get("stream"):
        session.close()
    # streamed: the caller reads and closes the response; the session goes with it
    return response
