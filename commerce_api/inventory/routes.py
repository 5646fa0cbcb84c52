"""Inventory API: /api/inventory (records, stock levels, the ledger, warehouses)."""

from flask import g
from flask.views import MethodView

from ..auth.middleware import require_scope
from ..http.blueprint import Blueprint
from ..http.bulk import load_items
from ..http.envelope import list_page, one, resource_page
from . import adjustments, services
from .schemas import (
    AdjustmentEnvelopeSchema,
    AdjustmentListArgsSchema,
    AdjustmentListSchema,
    BulkStockItemSchema,
    BulkStockResultEnvelopeSchema,
    BulkStockSchema,
    InventoryListArgsSchema,
    InventoryListSchema,
    InventoryRecordEnvelopeSchema,
    RecordFieldsArgsSchema,
    SafetyStockSchema,
    StockAdjustSchema,
    StockSetSchema,
    TenantAdjustmentListArgsSchema,
    WarehouseCreateSchema,
    WarehouseEnvelopeSchema,
    WarehouseListArgsSchema,
    WarehouseListSchema,
    WarehouseUpdateSchema,
)

blp = Blueprint(
    "inventory",
    __name__,
    url_prefix="/api/inventory",
    description="Stock per SKU across warehouses, its adjustments ledger, and warehouses.",
)

_bulk_item_schema = BulkStockItemSchema()


@blp.route("")
class InventoryViews(MethodView):
    @require_scope("inventory:read")
    @blp.arguments(InventoryListArgsSchema, location="query")
    @blp.returns(200, InventoryListSchema)
    @blp.errors("INVALID_CURSOR", "VALIDATION_ERROR", "WAREHOUSE_NOT_FOUND")
    def get(self, args):
        """List inventory records"""
        return list_page(
            args, services.RECORD_FIELDS, services.list_records, g.auth.tenant_id, always=("sku",)
        )


@blp.route("/adjustments")
class TenantAdjustmentViews(MethodView):
    @require_scope("inventory:read")
    @blp.arguments(TenantAdjustmentListArgsSchema, location="query")
    @blp.returns(200, AdjustmentListSchema)
    @blp.errors("WAREHOUSE_NOT_FOUND", "INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List the stock adjustments of every SKU (the tenant's whole ledger)"""
        return list_page(
            args,
            services.ADJUSTMENT_FIELDS,
            adjustments.list_tenant_adjustments,
            g.auth.tenant_id,
        )


@blp.route("/warehouses")
class WarehouseViews(MethodView):
    @require_scope("inventory:read")
    @blp.arguments(WarehouseListArgsSchema, location="query")
    @blp.returns(200, WarehouseListSchema)
    @blp.errors("INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List the tenant's warehouses"""
        return list_page(
            args, services.WAREHOUSE_FIELDS, services.list_warehouses, g.auth.tenant_id
        )

    @require_scope("inventory:write")
    @blp.arguments(WarehouseCreateSchema)
    @blp.returns(201, WarehouseEnvelopeSchema)
    @blp.errors(body=True)
    def post(self, data):
        """Create an own warehouse"""
        return one(services.create_warehouse(g.auth.tenant_id, data), 201)


@blp.route("/warehouses/<string:warehouse_id>")
class WarehouseByIdViews(MethodView):
    @require_scope("inventory:read")
    @blp.returns(200, WarehouseEnvelopeSchema)
    @blp.errors("WAREHOUSE_NOT_FOUND")
    def get(self, warehouse_id):
        """Get a warehouse"""
        warehouse = services.get_warehouse(g.auth.tenant_id, warehouse_id)
        return one(services.serialize_warehouse(warehouse))

    @require_scope("inventory:write")
    @blp.arguments(WarehouseUpdateSchema)
    @blp.returns(200, WarehouseEnvelopeSchema)
    @blp.errors("WAREHOUSE_NOT_FOUND", "READONLY_WAREHOUSE", "WAREHOUSE_NOT_EMPTY", body=True)
    def patch(self, data, warehouse_id):
        """Rename, re-address, activate or deactivate an own warehouse"""
        return one(services.update_warehouse(g.auth.tenant_id, warehouse_id, data))


@blp.route("/bulk")
class InventoryBulkViews(MethodView):
    @require_scope("inventory:write")
    @blp.arguments(BulkStockSchema)
    @blp.returns(200, BulkStockResultEnvelopeSchema)
    @blp.errors(body=True)
    def post(self, data):
        """Set or change on-hand stock for up to 500 (SKU, warehouse) pairs, each on its own"""
        items = load_items(_bulk_item_schema, data["updates"], "sku")
        return one(services.bulk_set_stock(g.auth.tenant_id, items, g.auth.created_by))


@blp.route("/<string:sku>")
class InventoryBySkuViews(MethodView):
    @require_scope("inventory:read")
    @blp.arguments(RecordFieldsArgsSchema, location="query")
    @blp.returns(200, InventoryRecordEnvelopeSchema)
    @blp.errors("PRODUCT_NOT_FOUND", "INVENTORY_NOT_FOUND", "VALIDATION_ERROR")
    def get(self, args, sku):
        """Get a SKU's inventory record with its per-warehouse stock"""
        return resource_page(
            args,
            services.RECORD_FIELDS,
            services.get_record,
            g.auth.tenant_id,
            sku,
            always=("sku",),
        )

    @require_scope("inventory:write")
    @blp.arguments(StockSetSchema)
    @blp.returns(200, InventoryRecordEnvelopeSchema)
    @blp.errors(
        "PRODUCT_NOT_FOUND",
        "WAREHOUSE_NOT_FOUND",
        "READONLY_WAREHOUSE",
        "WAREHOUSE_INACTIVE",
        "NEGATIVE_QUANTITY",
        "BUNDLE_STOCK_IS_DERIVED",
        body=True,
    )
    def put(self, data, sku):
        """Set the on-hand stock of a SKU in one warehouse (writes an adjustment)"""
        return one(services.set_stock(g.auth.tenant_id, sku, data, g.auth.created_by))

    @require_scope("inventory:write")
    @blp.arguments(SafetyStockSchema)
    @blp.returns(200, InventoryRecordEnvelopeSchema)
    @blp.errors("PRODUCT_NOT_FOUND", "BUNDLE_STOCK_IS_DERIVED", body=True)
    def patch(self, data, sku):
        """Set a SKU's safety stock"""
        record = services.set_safety_stock(
            g.auth.tenant_id, sku, data["safety_stock"], g.auth.created_by
        )
        return one(record)


@blp.route("/<string:sku>/adjustments")
class AdjustmentViews(MethodView):
    @require_scope("inventory:read")
    @blp.arguments(AdjustmentListArgsSchema, location="query")
    @blp.returns(200, AdjustmentListSchema)
    @blp.errors(
        "PRODUCT_NOT_FOUND",
        "INVENTORY_NOT_FOUND",
        "WAREHOUSE_NOT_FOUND",
        "INVALID_CURSOR",
        "VALIDATION_ERROR",
    )
    def get(self, args, sku):
        """List a SKU's stock adjustments (the ledger)"""
        return list_page(
            args, services.ADJUSTMENT_FIELDS, services.list_adjustments, g.auth.tenant_id, sku
        )

    @require_scope("inventory:write")
    @blp.arguments(StockAdjustSchema)
    @blp.returns(201, AdjustmentEnvelopeSchema)
    @blp.errors(
        "PRODUCT_NOT_FOUND",
        "WAREHOUSE_NOT_FOUND",
        "READONLY_WAREHOUSE",
        "WAREHOUSE_INACTIVE",
        "NEGATIVE_QUANTITY",
        "BUNDLE_STOCK_IS_DERIVED",
        body=True,
    )
    def post(self, data, sku):
        """Add to or take from a SKU's on-hand stock in one warehouse, atomically"""
        return one(services.adjust_stock(g.auth.tenant_id, sku, data, g.auth.created_by), 201)
