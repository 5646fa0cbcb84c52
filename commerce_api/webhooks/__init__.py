"""Webhooks: endpoints, signed deliveries from the event outbox, retries, the delivery log."""
