"""Fair sharing inside one worker process: which endpoints to claim for, and which held
delivery a free sending thread sends next.

- Claims take tenants in turn: each free slot goes to the tenant holding the fewest
  deliveries in this process (the least recently served on a tie), and within it to the
  endpoint holding the fewest. One tenant never holds more than ``capacity - reserve``,
  so another tenant's deliveries can always be claimed at once.
- A free thread sends for the tenant with the fewest sends going (then the least recently
  served), to the endpoint with the fewest; an endpoint never has more than
  ``endpoint_limit`` sends going, and a tenant never more than ``threads - 1`` (one
  thread is always free for the others: a tenant whose receivers hang holds the rest).
- Deliveries of one endpoint are sent in the order they were claimed.
"""

import collections
import itertools
import threading
from collections.abc import Sequence

from .dispatch import Claimed


class Slots:
    def __init__(self, *, threads: int, capacity: int, endpoint_limit: int) -> None:
        self.threads = threads
        self.capacity = capacity
        self.endpoint_limit = max(1, endpoint_limit)
        self.tenant_claims = max(1, capacity - max(1, threads // 2))
        self.tenant_sends = max(1, threads - 1)
        self._cond = threading.Condition()
        self._queues = {}  # endpoint_id -> deque of Claimed, in claim order
        self._tenant_of = {}  # endpoint_id -> tenant_id, while it has held deliveries
        self._held = collections.Counter()  # tenant or endpoint id -> held deliveries
        self._sending = collections.Counter()  # tenant or endpoint id -> sends going
        self._served = {}  # tenant or endpoint id -> turn when last served
        self._turn = itertools.count()
        self._closed = False

    # Claiming ---------------------------------------------------------------------------

    def plan(self, free: int, candidates: dict[str, str]) -> dict[str, int]:
        """``{endpoint_id: how many to claim}`` for ``free`` slots among ``candidates``
        (``{endpoint_id: tenant_id}`` of endpoints with due deliveries), in turn."""
        with self._cond:
            return self._plan(free, candidates)

    def _plan(self, free, candidates):
        held = collections.Counter(self._held)
        by_tenant = collections.defaultdict(list)
        for endpoint_id, tenant_id in candidates.items():
            by_tenant[tenant_id].append(endpoint_id)
        quotas = collections.Counter()
        for _ in range(free):
            tenants = [t for t in by_tenant if held[t] < self.tenant_claims and by_tenant[t]]
            if not tenants:
                break
            tenant = min(tenants, key=lambda t: (held[t], self._served.get(t, -1)))
            endpoint = min(by_tenant[tenant], key=lambda e: (held[e], self._served.get(e, -1), e))
            quotas[endpoint] += 1
            held[tenant] += 1
            held[endpoint] += 1
            self._served[tenant] = self._served[endpoint] = next(self._turn)
        # the order of the claim statements: most wanted first
        return dict(quotas.most_common())

    def add(self, claimed: Sequence[Claimed]) -> None:
        """Hold the claimed deliveries for sending."""
        with self._cond:
            for delivery in claimed:
                self._queues.setdefault(delivery.endpoint_id, collections.deque()).append(delivery)
                self._tenant_of[delivery.endpoint_id] = delivery.tenant_id
                self._held[delivery.tenant_id] += 1
                self._held[delivery.endpoint_id] += 1
            self._cond.notify(len(claimed))  # any waiting thread can send any of them

    # Sending ----------------------------------------------------------------------------

    def _next(self):
        best = None
        for endpoint_id, queue in self._queues.items():
            if not queue or self._sending[endpoint_id] >= self.endpoint_limit:
                continue
            tenant_id = self._tenant_of[endpoint_id]
            if self._sending[tenant_id] >= self.tenant_sends:
                continue
            key = (
                self._sending[tenant_id],
                self._served.get(("send", tenant_id), -1),
                self._sending[endpoint_id],
                self._served.get(("send", endpoint_id), -1),
            )
            if best is None or key < best[0]:
                best = (key, endpoint_id, tenant_id)
        if best is None:
            return None
        _, endpoint_id, tenant_id = best
        delivery = self._queues[endpoint_id].popleft()
        turn = next(self._turn)
        self._served[("send", tenant_id)] = self._served[("send", endpoint_id)] = turn
        self._sending[tenant_id] += 1
        self._sending[endpoint_id] += 1
        return delivery

    def take(self) -> Claimed | None:
        """The next delivery to send (blocks); None once closed."""
        with self._cond:
            while True:
                if self._closed:
                    return None
                delivery = self._next()
                if delivery is not None:
                    return delivery
                self._cond.wait()

    def done(self, delivery: Claimed) -> None:
        """A send has ended (its outcome is on its way to be recorded)."""
        with self._cond:
            for key in (delivery.tenant_id, delivery.endpoint_id):
                self._sending[key] -= 1
                self._held[key] -= 1
                if self._held[key] <= 0:
                    del self._held[key]
                    self._sending.pop(key, None)
                    self._served.pop(("send", key), None)
            endpoint_id = delivery.endpoint_id
            if not self._queues.get(endpoint_id) and endpoint_id not in self._held:
                self._queues.pop(endpoint_id, None)
                self._tenant_of.pop(endpoint_id, None)
            self._cond.notify()  # one send more is allowed: one thread may take it

    def queued(self) -> int:
        with self._cond:
            return sum(len(queue) for queue in self._queues.values())

    def unqueue(self) -> list[Claimed]:
        """Take out every delivery not being sent (a stopping worker gives them back)."""
        with self._cond:
            left = []
            for endpoint_id, queue in self._queues.items():
                while queue:
                    delivery = queue.popleft()
                    left.append(delivery)
                    for key in (delivery.tenant_id, endpoint_id):
                        self._held[key] -= 1
                        if self._held[key] <= 0:
                            del self._held[key]
            return left

    def close(self) -> list[Claimed]:
        """Wake every thread: no more deliveries are taken; returns those left queued."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            return self.unqueue()
