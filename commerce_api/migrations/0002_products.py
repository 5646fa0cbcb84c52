"""Products, listings, orders and jobs: the tables products read or write."""


def up(migrator, db):
    from commerce_api.jobs.models import Job
    from commerce_api.orders.models import Order, OrderLine
    from commerce_api.products.models import Listing, Product

    db.create_tables([Product, Listing, Order, OrderLine, Job])
