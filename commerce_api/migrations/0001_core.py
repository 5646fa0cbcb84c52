"""Tenants, API keys and the event outbox."""


def up(migrator, db):
    from commerce_api.auth.models import ApiKey, Tenant
    from commerce_api.events.models import Event

    db.create_tables([Tenant, ApiKey, Event])
