"""Products and their listings; also orders with their lines, and the job table.

The name says products only, but this migration creates the orders, order lines and jobs
tables too (every table the products code of its day read or wrote). It keeps its name:
databases record applied migrations by file name (``schema_migration``).
"""

from peewee import (
    SQL,
    BigIntegerField,
    BooleanField,
    CharField,
    DecimalField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from commerce_api.migrations.frozen import Frozen, stub

# The tables as this migration creates them, frozen: see migrations/frozen.py.

# Created by an earlier migration; only the key is referenced:
Tenant = stub("tenant", 36)


class Product(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    sku = CharField(max_length=64)
    title = CharField(max_length=500)
    description = TextField(null=True)
    status = CharField(max_length=16)
    gtin = CharField(max_length=14, null=True)
    category = CharField(max_length=100, null=True)
    cost_price = DecimalField(max_digits=14, decimal_places=2, null=True)
    weight_kg = DecimalField(max_digits=12, decimal_places=3, null=True)
    images = TextField()
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "product"
        indexes = (
            (("tenant", "sku"), True),
            (("tenant", "created_at", "id"), False),
            (("tenant", "updated_at", "id"), False),
            (("tenant", "title", "id"), False),
            (("tenant", "status", "created_at", "id"), False),
            (("tenant", "gtin"), False),
        )


class Listing(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    product = ForeignKeyField(Product, on_delete="CASCADE", index=False)
    marketplace = CharField(max_length=64)
    external_id = CharField(max_length=200, null=True)
    price = DecimalField(max_digits=14, decimal_places=2, null=True)
    currency = CharField(max_length=3, null=True)
    quantity = IntegerField()
    status = CharField(max_length=32)
    last_synced_at = BigIntegerField(null=True)
    created_at = BigIntegerField()
    updated_at = BigIntegerField()
    stock_buffer = IntegerField()
    sync_status = CharField(max_length=16)
    version = IntegerField()
    synced_version = IntegerField()
    last_sync_error = TextField(null=True)
    next_push_at = BigIntegerField(null=True)
    push_failures = IntegerField()
    lease_until = BigIntegerField(null=True)
    lease_token = CharField(max_length=80, null=True)
    pushing_version = IntegerField(null=True)

    class Meta:
        table_name = "listing"
        indexes = (
            (("product", "marketplace"), True),
            (("tenant", "marketplace"), False),
        )


class Order(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    connection_id = CharField(max_length=40, null=True)
    marketplace = CharField(max_length=64)
    external_order_id = CharField(max_length=200)
    status = CharField(max_length=16)
    fulfillment_method = CharField(max_length=3)
    total_amount = DecimalField(max_digits=14, decimal_places=2)
    currency = CharField(max_length=3)
    placed_at = BigIntegerField()
    shipping_address = TextField(null=True)
    shipment = TextField(null=True)
    cancellation = TextField(null=True)
    has_returns = BooleanField()
    stock_shortage = BooleanField()
    reserved = TextField()
    source = CharField(max_length=16)
    created_at = BigIntegerField()
    updated_at = BigIntegerField()

    class Meta:
        table_name = "order"
        indexes = (
            (("tenant", "marketplace", "external_order_id"), True),
            (("tenant", "placed_at", "id"), False),
            (("tenant", "updated_at", "id"), False),
            (("tenant", "status", "placed_at", "id"), False),
        )


class OrderLine(Frozen):
    id = CharField(max_length=40, primary_key=True)
    order = ForeignKeyField(Order, on_delete="CASCADE")
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    position = IntegerField()
    external_line_item_id = CharField(max_length=200)
    sku = CharField(max_length=64)
    title = CharField(max_length=500, null=True)
    quantity = IntegerField()
    unit_price = DecimalField(max_digits=14, decimal_places=2)
    line_total = DecimalField(max_digits=14, decimal_places=2)
    shipped_quantity = IntegerField()

    class Meta:
        table_name = "order_line"
        indexes = (
            (("tenant", "sku"), False),
            (("order", "external_line_item_id"), True),
        )


class Job(Frozen):
    id = CharField(max_length=40, primary_key=True)
    tenant_id = CharField(max_length=36)
    type = CharField(max_length=64)
    internal = BooleanField()
    status = CharField(max_length=16)
    priority = CharField(max_length=8)
    priority_rank = IntegerField()
    params = TextField()
    result = TextField(null=True)
    error = TextField(null=True)
    last_error = TextField(null=True)
    progress = TextField(null=True)
    attempts = IntegerField()
    max_attempts = IntegerField()
    timeout_seconds = IntegerField()
    run_at = BigIntegerField()
    claim_key = BigIntegerField()
    batch_id = CharField(max_length=40, null=True)
    batch_position = IntegerField(null=True)
    batch_sequential = BooleanField()
    worker_id = CharField(max_length=100, null=True)
    lease_expires_at = BigIntegerField(null=True)
    deadline_at = BigIntegerField(null=True)
    cancel_reason = CharField(max_length=40, null=True)
    created_by = CharField(max_length=200, null=True)
    created_at = BigIntegerField()
    estimated_completion_at = BigIntegerField(null=True)
    started_at = BigIntegerField(null=True)
    completed_at = BigIntegerField(null=True)
    updated_at = BigIntegerField()

    class Meta:
        table_name = "job"
        indexes = ((("tenant_id", "created_at", "id"), False),)


# the queue's partial indexes (a job is in them only while queued, or running)
QUEUED = SQL("status = 'queued'")
Job.add_index(Job.claim_key, Job.id, where=QUEUED)
Job.add_index(
    Job.index(Job.tenant_id, Job.priority_rank, Job.claim_key, name="job_fair_tail", where=QUEUED)
)
Job.add_index(Job.lease_expires_at, where=SQL("status = 'running'"))
Job.add_index(Job.batch_id, Job.batch_position, where=SQL("batch_id IS NOT NULL"))


MODELS = [Product, Listing, Order, OrderLine, Job]


def up(migrator, db):
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)
