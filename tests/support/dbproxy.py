"""A TCP proxy on 127.0.0.1 in front of the PostgreSQL server, for one process under test:
``cut()`` drops every connection through it (what a failover does to its clients),
``block()`` refuses new ones until ``unblock()`` (the database is down for that process
while the test itself still reaches it directly).
"""

import contextlib
import selectors
import socket
import threading
from urllib.parse import urlparse, urlunparse


class DatabaseProxy:
    def __init__(self, database_url: str) -> None:
        parsed = urlparse(database_url)
        self.target = (parsed.hostname or "127.0.0.1", parsed.port or 5432)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        userinfo = parsed.netloc.rsplit("@", 1)[0] + "@" if "@" in parsed.netloc else ""
        self.url = urlunparse(parsed._replace(netloc=f"{userinfo}127.0.0.1:{self.port}"))
        self.blocked = threading.Event()
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._pairs = []  # [client socket, server socket] of each open connection
        self._threads = [threading.Thread(target=self._accept, daemon=True)]

    def _accept(self):
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            if self.blocked.is_set():
                client.close()  # the server is "down": the client sees the connection drop
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            pair = [client, server]
            with self._lock:
                self._pairs.append(pair)
            thread = threading.Thread(target=self._pump, args=(pair,), daemon=True)
            thread.start()

    def _pump(self, pair):
        client, server = pair
        selector = selectors.DefaultSelector()
        try:
            for sock in pair:
                sock.setblocking(False)
                selector.register(sock, selectors.EVENT_READ)
            while not self._closing.is_set():
                for key, _ in selector.select(timeout=0.2):
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    other = server if key.fileobj is client else client
                    other.setblocking(True)
                    other.sendall(data)
                    other.setblocking(False)
        except (OSError, ValueError):
            return
        finally:
            selector.close()
            self._drop(pair)

    def _drop(self, pair):
        with self._lock:
            if pair in self._pairs:
                self._pairs.remove(pair)
        for sock in pair:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()

    def connections(self) -> int:
        with self._lock:
            return len(self._pairs)

    def cut(self) -> None:
        """Drop every open connection through the proxy."""
        with self._lock:
            pairs = list(self._pairs)
        for pair in pairs:
            self._drop(pair)

    def block(self) -> None:
        self.blocked.set()

    def unblock(self) -> None:
        self.blocked.clear()

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self._closing.set()
        self.cut()
        for thread in self._threads:
            thread.join(timeout=5)
        self._listener.close()
