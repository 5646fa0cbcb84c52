"""Transfers API: /api/inventory/transfers (stock moved between own warehouses)."""

from flask import g
from flask.views import MethodView

from ..auth.middleware import require_scope
from ..http.blueprint import Blueprint
from ..http.envelope import list_page, one, resource_page
from . import services
from .schemas import (
    TransferCreateSchema,
    TransferEnvelopeSchema,
    TransferFieldsArgsSchema,
    TransferListArgsSchema,
    TransferListSchema,
    TransferReceiveSchema,
)

blp = Blueprint(
    "transfers",
    __name__,
    url_prefix="/api/inventory/transfers",
    description="Stock moved between own warehouses: draft, in transit, received or cancelled.",
)


@blp.route("")
class TransferViews(MethodView):
    @require_scope("inventory:read")
    @blp.arguments(TransferListArgsSchema, location="query")
    @blp.returns(200, TransferListSchema)
    @blp.errors(services.list_transfers, "VALIDATION_ERROR")
    def get(self, args):
        """List transfers"""
        return list_page(args, services.TRANSFER_FIELDS, services.list_transfers, g.auth.tenant_id)

    @require_scope("inventory:write")
    @blp.arguments(TransferCreateSchema)
    @blp.returns(201, TransferEnvelopeSchema)
    @blp.errors(services.create_transfer, body=True)
    def post(self, data):
        """Create a draft transfer between two own warehouses"""
        return one(services.create_transfer(g.auth.tenant_id, data, g.auth.created_by), 201)


@blp.route("/<string:transfer_id>")
class TransferByIdViews(MethodView):
    @require_scope("inventory:read")
    @blp.arguments(TransferFieldsArgsSchema, location="query")
    @blp.returns(200, TransferEnvelopeSchema)
    @blp.errors(services.get_transfer)
    def get(self, args, transfer_id):
        """Get a transfer"""
        return resource_page(
            args, services.TRANSFER_FIELDS, services.get_transfer, g.auth.tenant_id, transfer_id
        )


@blp.route("/<string:transfer_id>/ship")
class TransferShipViews(MethodView):
    @require_scope("inventory:write")
    @blp.returns(200, TransferEnvelopeSchema)
    @blp.errors(services.ship_transfer)
    def post(self, transfer_id):
        """Ship a draft transfer: its stock leaves the source and is in transit"""
        return one(services.ship_transfer(g.auth.tenant_id, transfer_id, g.auth.created_by))


@blp.route("/<string:transfer_id>/receive")
class TransferReceiveViews(MethodView):
    @require_scope("inventory:write")
    @blp.arguments(TransferReceiveSchema, required=False)
    @blp.returns(200, TransferEnvelopeSchema)
    @blp.errors(services.receive_transfer, body=True)
    def post(self, data, transfer_id):
        """Receive a transfer in transit, whole or per line and partly"""
        lines = (data or {}).get("lines")
        return one(
            services.receive_transfer(g.auth.tenant_id, transfer_id, lines, g.auth.created_by)
        )


@blp.route("/<string:transfer_id>/cancel")
class TransferCancelViews(MethodView):
    @require_scope("inventory:write")
    @blp.returns(200, TransferEnvelopeSchema)
    @blp.errors(services.cancel_transfer)
    def post(self, transfer_id):
        """Cancel a draft, or a transfer in transit (what is not received goes back)"""
        return one(services.cancel_transfer(g.auth.tenant_id, transfer_id, g.auth.created_by))
