"""Applying a chunk of rows through the domains' own services, one class per file type."""

import marshmallow as ma
from peewee import IntegrityError

from ..db import write_transaction
from ..errors import ApiError
from ..inventory.models import InventorySummary, Stock, Warehouse
from ..inventory.schemas import BulkStockItemSchema, SafetyStockSchema
from ..inventory.services import bulk_set_stock, set_safety_stock
from ..marketplaces.product_sync import update_listing
from ..products.bundles import bundle_ids, bundle_stock_error
from ..products.models import Listing, Product
from ..products.schemas import ListingUpdateSchema, ProductCreateSchema, ProductUpdateSchema
from ..products.services import (
    changed_fields,
    check_gtin,
    create_product,
    create_products,
    update_product,
)
from .rows import Outcome, Row, api_error, row_error, validation_errors

DEFAULT_REASON = "cycle_count"  # a level from a spreadsheet is a count


class ProductRows:
    """New products go in one INSERT per chunk; a row equal to its product is not
    written at all; a changed one goes through ``update_product`` (events, pushes)."""

    chunk_rows = 200  # rows to a transaction (it holds SQLite's write lock meanwhile)

    def __init__(self, tenant_id, created_by):
        self.tenant_id = tenant_id
        self.create_schema = ProductCreateSchema()
        self.update_schema = ProductUpdateSchema()

    def apply(self, rows: list[Row], outcome: Outcome) -> None:
        skus = [row.values["sku"] for row in rows]
        existing = {
            product["sku"]: product
            for product in Product.select()
            .where((Product.tenant == self.tenant_id) & Product.sku.in_(skus))
            .dicts()
        }
        new = []
        for row in rows:
            sku = row.values["sku"]
            stored = existing.get(sku)
            schema = self.create_schema if stored is None else self.update_schema
            data = {k: v for k, v in row.values.items() if not (stored and k == "sku")}
            try:
                loaded = schema.load(data)
                check_gtin(loaded.get("gtin"))
            except ma.ValidationError as error:
                outcome.fail(*validation_errors(row.number, error.messages))
                continue
            except ApiError as error:
                outcome.fail(api_error(row.number, error, "gtin"))
                continue
            if stored is None:
                new.append((row, loaded))
            elif not changed_fields(stored, loaded):
                outcome.unchanged += 1
            else:
                try:
                    update_product(self.tenant_id, sku, loaded)
                except ApiError as error:
                    outcome.fail(api_error(row.number, error))
                    continue
                outcome.updated += 1
        self._create(new, outcome)

    def _create(self, new, outcome):
        if not new:
            return
        try:
            with write_transaction():  # a savepoint: on a race, one by one instead
                create_products(self.tenant_id, [loaded for _, loaded in new])
            outcome.created += len(new)
            return
        except IntegrityError:
            pass
        for row, loaded in new:
            try:
                create_product(self.tenant_id, loaded)
            except ApiError as error:
                outcome.fail(api_error(row.number, error, "sku"))
                continue
            outcome.created += 1


class InventoryRows:
    # one bulk stock change per chunk, at its maximum size: the ledger's locks and reads
    # are per chunk, so bigger chunks cost less per row (a chunk of 500 takes ~0.3 s)
    chunk_rows = 500

    def __init__(self, tenant_id, created_by):
        self.tenant_id = tenant_id
        self.created_by = created_by
        self.item_schema = BulkStockItemSchema()
        self.safety_schema = SafetyStockSchema()
        warehouses = list(Warehouse.select().where(Warehouse.tenant == tenant_id))
        self.by_id = {w.id: w for w in warehouses}
        self.by_name = {}
        for warehouse in warehouses:
            self.by_name.setdefault(warehouse.name, warehouse)

    def _warehouse(self, values):
        warehouse = self.by_id.get(values.get("warehouse_id") or "")
        if warehouse is None and values.get("warehouse_name"):
            warehouse = self.by_name.get(values["warehouse_name"])
        return warehouse

    def _read(self, rows: list[Row]) -> tuple[dict, dict, set, dict]:
        """What the chunk's checks need: ``{sku: product id}``, ``{(product, warehouse):
        on hand}``, the bundles among the products, ``{sku: safety stock}``."""
        skus = sorted({row.values["sku"] for row in rows})
        products = dict(
            Product.select(Product.sku, Product.id)
            .where((Product.tenant == self.tenant_id) & Product.sku.in_(skus))
            .tuples()
        )
        levels = {
            (product, warehouse): on_hand
            for product, warehouse, on_hand in Stock.select(
                Stock.product, Stock.warehouse, Stock.on_hand
            )
            .where((Stock.tenant == self.tenant_id) & Stock.product.in_(list(products.values())))
            .tuples()
        }
        safety = dict(
            InventorySummary.select(InventorySummary.sku, InventorySummary.safety_stock)
            .where((InventorySummary.tenant == self.tenant_id) & InventorySummary.sku.in_(skus))
            .tuples()
        )
        return products, levels, bundle_ids(products.values()), safety

    def apply(self, rows: list[Row], outcome: Outcome) -> None:
        products, levels, bundles, safety = self._read(rows)
        items, of_item, safety_changes = [], {}, {}
        for row in rows:
            sku = row.values["sku"]
            if sku not in products:
                outcome.fail(
                    row_error(row.number, "sku", "PRODUCT_NOT_FOUND", f"No product {sku}.")
                )
                continue
            if products[sku] in bundles:  # its stock is derived: refused as the API does
                outcome.fail(api_error(row.number, bundle_stock_error(sku), "sku"))
                continue
            try:
                item = self._stock_item(row, products[sku], levels)
                safety_stock = row.values.get("safety_stock")
                if safety_stock is not None:
                    self.safety_schema.load({"safety_stock": safety_stock})
            except ma.ValidationError as error:
                outcome.fail(*validation_errors(row.number, error.messages))
                continue
            except ApiError as error:
                outcome.fail(api_error(row.number, error))
                continue
            if safety_stock is not None and safety_stock != safety.get(sku):
                safety_changes[row.number] = (sku, safety_stock)
            if item is not None:
                item["index"] = len(items)
                of_item[item["index"]] = row
                items.append(item)
            elif row.number in safety_changes:
                self._set_safety(row, safety_changes, outcome)
            else:
                outcome.unchanged += 1
        if not items:
            return
        result = bulk_set_stock(self.tenant_id, items, self.created_by)
        failed = set()
        for error in result["errors"]:
            row = of_item[error["index"]]
            failed.add(error["index"])
            outcome.fail(row_error(row.number, "quantity", error["code"], error["message"]))
        for index, row in of_item.items():
            if index not in failed:
                self._set_safety(row, safety_changes, outcome)

    def _stock_item(self, row, product_id, levels):
        """The bulk item that sets the row's level, or None when it is already that."""
        level = row.values.get("quantity")
        if level is None:
            return None
        warehouse = self._warehouse(row.values)
        if warehouse is None:
            column = "warehouse_id" if row.values.get("warehouse_id") else "warehouse_name"
            raise ApiError(
                "WAREHOUSE_NOT_FOUND",
                "No warehouse of the tenant has this id or name.",
                details={"field": column},
            )
        if levels.get((product_id, warehouse.id)) == level:
            return None
        item = {k: v for k, v in row.values.items() if k in ("note", "reason")}
        item.setdefault("reason", DEFAULT_REASON)
        return self.item_schema.load(
            {**item, "sku": row.values["sku"], "warehouse_id": warehouse.id, "quantity": level}
        )

    def _set_safety(self, row, safety_changes, outcome):
        change = safety_changes.get(row.number)
        if change is not None:
            try:
                with write_transaction():  # a savepoint: the row alone on a refusal
                    set_safety_stock(self.tenant_id, change[0], change[1], self.created_by)
            except ApiError as error:
                outcome.fail(api_error(row.number, error, "safety_stock"))
                return
        outcome.updated += 1


class ListingRows:
    chunk_rows = 200

    def __init__(self, tenant_id, created_by):
        self.tenant_id = tenant_id
        self.schema = ListingUpdateSchema()

    def apply(self, rows: list[Row], outcome: Outcome) -> None:
        skus = sorted({row.values["sku"] for row in rows})
        versions = {
            (sku, marketplace): updated_at
            for sku, marketplace, updated_at in Listing.select(
                Product.sku, Listing.marketplace, Listing.updated_at
            )
            .join(Product, on=(Listing.product == Product.id))
            .where((Listing.tenant == self.tenant_id) & Product.sku.in_(skus))
            .tuples()
        }
        for row in rows:
            sku, marketplace = row.values["sku"], row.values["marketplace"]
            changes = {k: v for k, v in row.values.items() if k not in ("sku", "marketplace")}
            try:
                loaded = self.schema.load(changes)
            except ma.ValidationError as error:
                outcome.fail(*validation_errors(row.number, error.messages))
                continue
            try:
                update_listing(self.tenant_id, sku, marketplace, loaded)
            except ApiError as error:
                column = "marketplace" if error.code == "LISTING_NOT_FOUND" else "sku"
                outcome.fail(api_error(row.number, error, column))
                continue
            after = (
                Listing.select(Listing.updated_at)
                .join(Product, on=(Listing.product == Product.id))
                .where(
                    (Listing.tenant == self.tenant_id)
                    & (Product.sku == sku)
                    & (Listing.marketplace == marketplace)
                )
                .scalar()
            )
            if after != versions.get((sku, marketplace)):
                outcome.updated += 1
            else:
                outcome.unchanged += 1


APPLIERS = {"products": ProductRows, "inventory": InventoryRows, "listings": ListingRows}
