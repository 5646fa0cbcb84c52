"""Marketplace connections, the sync history, the sandbox's state and order returns."""


def up(migrator, db):
    from commerce_api.marketplaces.models import MarketplaceConnection, SandboxOrder, SyncAttempt
    from commerce_api.orders.models import OrderReturn

    db.create_tables([MarketplaceConnection, SyncAttempt, SandboxOrder, OrderReturn])
