"""Products API: /api/products."""

from flask import g
from flask.views import MethodView

from ..auth.middleware import require_scope
from ..http.blueprint import Blueprint
from ..http.bulk import load_items
from ..http.envelope import json_response, list_page, no_content, one, resource_page
from ..marketplaces import product_sync
from . import services
from .schemas import (
    DETAIL_FIELDS,
    BulkItemSchema,
    BulkResultEnvelopeSchema,
    BulkUpdateSchema,
    ListingEnvelopeSchema,
    ListingListArgsSchema,
    ListingListSchema,
    ListingUpdateSchema,
    ProductCreateSchema,
    ProductDetailEnvelopeSchema,
    ProductEnvelopeSchema,
    ProductFieldsArgsSchema,
    ProductListArgsSchema,
    ProductListSchema,
    ProductUpdateSchema,
    SyncRequestSchema,
    SyncResultEnvelopeSchema,
)

blp = Blueprint(
    "products",
    __name__,
    url_prefix="/api/products",
    description="The product catalog and its per-marketplace listings.",
)

# the listings of every product, by sync status (the ones that need attention)
listings_blp = Blueprint(
    "listings",
    __name__,
    url_prefix="/api/listings",
    description="Every product's listings, by sync status and marketplace.",
)

_bulk_item_schema = BulkItemSchema()


@listings_blp.route("")
class ListingListViews(MethodView):
    @require_scope("products:read")
    @listings_blp.arguments(ListingListArgsSchema, location="query")
    @listings_blp.returns(200, ListingListSchema)
    @listings_blp.errors("INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List listings (filter by sync status: pending, error)"""
        return list_page(
            args,
            services.LISTING_ROW_FIELDS,
            services.list_listings,
            g.auth.tenant_id,
            always=("sku", "marketplace"),
        )


@blp.route("")
class ProductViews(MethodView):
    @require_scope("products:read")
    @blp.arguments(ProductListArgsSchema, location="query")
    @blp.returns(200, ProductListSchema)
    @blp.errors("INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List products"""
        return list_page(args, services.PRODUCT_FIELDS, services.list_products, g.auth.tenant_id)

    @require_scope("products:write")
    @blp.arguments(ProductCreateSchema)
    @blp.returns(201, ProductEnvelopeSchema)
    @blp.errors(services.create_product, body=True)
    def post(self, data):
        """Create a product"""
        return one(services.create_product(g.auth.tenant_id, data), 201)


@blp.route("/bulk")
class ProductBulkViews(MethodView):
    @require_scope("products:write")
    @blp.arguments(BulkUpdateSchema)
    @blp.returns(200, BulkResultEnvelopeSchema)
    @blp.errors(body=True)
    def post(self, data):
        """Update up to 100 products, each on its own"""
        items = load_items(_bulk_item_schema, data["updates"], "sku")
        return one(services.bulk_update(g.auth.tenant_id, items))


@blp.route("/<string:sku>")
class ProductBySkuViews(MethodView):
    @require_scope("products:read")
    @blp.arguments(ProductFieldsArgsSchema, location="query")
    @blp.returns(200, ProductDetailEnvelopeSchema)
    @blp.errors(services.get_product, "VALIDATION_ERROR")
    def get(self, args, sku):
        """Get a product with its listings"""
        return resource_page(args, DETAIL_FIELDS, services.get_product, g.auth.tenant_id, sku)

    @require_scope("products:write")
    @blp.arguments(ProductUpdateSchema)
    @blp.returns(200, ProductEnvelopeSchema)
    @blp.errors(services.update_product, body=True)
    def patch(self, data, sku):
        """Update a product's fields"""
        return one(services.update_product(g.auth.tenant_id, sku, data))

    @require_scope("products:write")
    @blp.returns(204)
    @blp.errors(services.archive_product)
    def delete(self, sku):
        """Archive a product (soft delete)"""
        services.archive_product(g.auth.tenant_id, sku)
        return no_content()


@blp.route("/<string:sku>/sync")
class ProductSyncViews(MethodView):
    @require_scope("products:write")
    @blp.arguments(SyncRequestSchema, required=False)
    @blp.returns(202, SyncResultEnvelopeSchema)
    @blp.errors("PRODUCT_NOT_FOUND", "MARKETPLACE_NOT_CONNECTED", "QUEUE_FULL", body=True)
    def post(self, data, sku):
        """Push a product to its marketplaces (queues a marketplace_sync job)"""
        if data is None:
            data = {}
        result = product_sync.request_sync(
            g.auth.tenant_id, sku, data.get("marketplaces"), g.auth.created_by
        )
        return json_response({"data": result}, 202)


@blp.route("/<string:sku>/listings/<string:marketplace>")
class ListingViews(MethodView):
    @require_scope("products:write")
    @blp.arguments(ListingUpdateSchema)
    @blp.returns(200, ListingEnvelopeSchema)
    @blp.errors(
        "PRODUCT_NOT_FOUND",
        "LISTING_NOT_FOUND",
        "INVALID_ALLOCATION",
        "WAREHOUSE_NOT_FOUND",
        "READONLY_WAREHOUSE",
        "WAREHOUSE_INACTIVE",
        body=True,
    )
    def patch(self, data, sku, marketplace):
        """Change a listing's price, stock buffer or status (pushed by the worker)"""
        return one(product_sync.update_listing(g.auth.tenant_id, sku, marketplace, data))
