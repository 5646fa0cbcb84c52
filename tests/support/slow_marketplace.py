"""A marketplace adapter on 127.0.0.1 that trickles its answer, one byte a second."""

import socket
import socketserver
import threading
import time

ANSWER_BODY = b'{"confirmation_id": "CONF-SLOW"}' + b" " * 200
ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    + b"Content-Length: "
    + str(len(ANSWER_BODY)).encode()
    + b"\r\n\r\n"
    + ANSWER_BODY
)
MAX_SECONDS = 120  # a trickle never outlives a test run


class TricklingMarketplace:
    """Reads each request, then sends the answer (status line first) a byte at a time."""

    def __init__(self, interval=1.0):
        self.interval = interval
        self.requests = 0
        self.in_flight = 0
        self.lock = threading.Lock()
        self.closed = threading.Event()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                sock = self.request
                sock.settimeout(5)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = sock.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                except OSError:
                    return
                with outer.lock:
                    outer.requests += 1
                    outer.in_flight += 1
                try:
                    started = time.monotonic()
                    for byte in ANSWER:
                        if outer.closed.is_set() or time.monotonic() - started > MAX_SECONDS:
                            return
                        try:
                            sock.sendall(bytes([byte]))
                        except OSError:
                            return  # the client gave up: what a deadline does
                        outer.closed.wait(outer.interval)
                finally:
                    with outer.lock:
                        outer.in_flight -= 1
                    with_suppressed_close(sock)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.closed.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def with_suppressed_close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
