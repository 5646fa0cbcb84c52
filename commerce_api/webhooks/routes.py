"""Webhooks API: /api/webhooks (endpoints) and their delivery log."""

from flask import current_app, g
from flask.views import MethodView

from ..auth.middleware import require_scope
from ..http.blueprint import Blueprint
from ..http.envelope import list_page, no_content, one, resource_page
from ..http.idempotency import shown_once
from . import deliveries, endpoints, recovery
from .schemas import (
    DETAIL_DELIVERY_FIELDS,
    DeliveryEnvelopeSchema,
    DeliveryFieldsArgsSchema,
    DeliveryListArgsSchema,
    DeliveryListSchema,
    RecoverEnvelopeSchema,
    RecoverSchema,
    WebhookCreateSchema,
    WebhookEnvelopeSchema,
    WebhookFieldsArgsSchema,
    WebhookListArgsSchema,
    WebhookListSchema,
    WebhookTestEnvelopeSchema,
    WebhookUpdateSchema,
    WebhookWithSecretEnvelopeSchema,
    event_callbacks,
)

blp = Blueprint(
    "webhooks",
    __name__,
    url_prefix="/api/webhooks",
    description="Webhook endpoints: signed deliveries of events, retries, the delivery log.",
)


@blp.route("")
class WebhookViews(MethodView):
    @require_scope("webhooks:read")
    @blp.arguments(WebhookListArgsSchema, location="query")
    @blp.returns(200, WebhookListSchema)
    @blp.errors(endpoints.list_endpoints, "VALIDATION_ERROR")
    def get(self, args):
        """List webhook endpoints"""
        return list_page(
            args, endpoints.ENDPOINT_FIELDS, endpoints.list_endpoints, g.auth.tenant_id
        )

    @require_scope("webhooks:write")
    @blp.arguments(WebhookCreateSchema)
    @blp.returns(201, WebhookWithSecretEnvelopeSchema)
    @blp.errors(endpoints.create_endpoint, body=True)
    @blp.doc(callbacks=event_callbacks())
    def post(self, data):
        """Create a webhook endpoint (its secret is shown only in this answer)"""
        endpoint = endpoints.create_endpoint(g.auth.tenant_id, data, g.auth.has_scope)
        shown_once("secret")  # an idempotent replay of this answer shows ``secret`` null
        return one(endpoint, 201, headers={"Location": f"/api/webhooks/{endpoint['id']}"})


@blp.route("/<string:webhook_id>")
class WebhookByIdViews(MethodView):
    @require_scope("webhooks:read")
    @blp.arguments(WebhookFieldsArgsSchema, location="query")
    @blp.returns(200, WebhookEnvelopeSchema)
    @blp.errors(endpoints.get_endpoint, "VALIDATION_ERROR")
    def get(self, args, webhook_id):
        """Get a webhook endpoint"""
        return resource_page(
            args, endpoints.ENDPOINT_FIELDS, endpoints.get_endpoint, g.auth.tenant_id, webhook_id
        )

    @require_scope("webhooks:write")
    @blp.arguments(WebhookUpdateSchema)
    @blp.returns(200, WebhookEnvelopeSchema)
    @blp.errors(endpoints.update_endpoint, body=True)
    def patch(self, data, webhook_id):
        """Update a webhook endpoint's url, events, description or is_active"""
        return one(endpoints.update_endpoint(g.auth.tenant_id, webhook_id, data, g.auth.has_scope))

    @require_scope("webhooks:write")
    @blp.returns(204)
    @blp.errors(endpoints.delete_endpoint)
    def delete(self, webhook_id):
        """Delete a webhook endpoint and its delivery log"""
        endpoints.delete_endpoint(g.auth.tenant_id, webhook_id)
        return no_content()


@blp.route("/<string:webhook_id>/rotate-secret")
class WebhookRotateViews(MethodView):
    @require_scope("webhooks:write")
    @blp.returns(200, WebhookWithSecretEnvelopeSchema)
    @blp.errors(endpoints.rotate_secret)
    def post(self, webhook_id):
        """Replace the signing secret (the new one is shown only in this answer)"""
        rotated = endpoints.rotate_secret(g.auth.tenant_id, webhook_id)
        shown_once("secret")  # an idempotent replay of this answer shows ``secret`` null
        return one(rotated)


@blp.route("/<string:webhook_id>/test")
class WebhookTestViews(MethodView):
    @require_scope("webhooks:write")
    @blp.returns(202, WebhookTestEnvelopeSchema)
    @blp.errors(deliveries.send_test)
    def post(self, webhook_id):
        """Send a signed webhook.test event to this endpoint alone"""
        return one(deliveries.send_test(g.auth.tenant_id, webhook_id), 202)


@blp.route("/<string:webhook_id>/recover")
class WebhookRecoverViews(MethodView):
    @require_scope("webhooks:write")
    @blp.arguments(RecoverSchema)
    @blp.returns(202, RecoverEnvelopeSchema)
    @blp.errors(recovery.recover, body=True)
    def post(self, data, webhook_id):
        """Deliver again every event since a time that the endpoint has not received"""
        retention = current_app.config["WEBHOOK_RETENTION_DAYS"]
        summary = recovery.recover(
            g.auth.tenant_id, webhook_id, data["since"], retention, has_scope=g.auth.has_scope
        )
        return one(summary, 202)


@blp.route("/<string:webhook_id>/deliveries")
class DeliveryViews(MethodView):
    @require_scope("webhooks:read")
    @blp.arguments(DeliveryListArgsSchema, location="query")
    @blp.returns(200, DeliveryListSchema)
    @blp.errors(deliveries.list_deliveries, "VALIDATION_ERROR")
    def get(self, args, webhook_id):
        """List an endpoint's deliveries, newest first"""
        return list_page(
            args,
            deliveries.DELIVERY_FIELDS,
            deliveries.list_deliveries,
            g.auth.tenant_id,
            webhook_id,
        )


@blp.route("/<string:webhook_id>/deliveries/<string:delivery_id>")
class DeliveryByIdViews(MethodView):
    @require_scope("webhooks:read")
    @blp.arguments(DeliveryFieldsArgsSchema, location="query")
    @blp.returns(200, DeliveryEnvelopeSchema)
    @blp.errors(deliveries.get_delivery, "VALIDATION_ERROR")
    def get(self, args, webhook_id, delivery_id):
        """Get a delivery with its attempts"""
        return resource_page(
            args,
            DETAIL_DELIVERY_FIELDS,
            deliveries.get_delivery,
            g.auth.tenant_id,
            webhook_id,
            delivery_id,
        )


@blp.route("/<string:webhook_id>/deliveries/<string:delivery_id>/redeliver")
class RedeliverViews(MethodView):
    @require_scope("webhooks:write")
    @blp.returns(202, DeliveryEnvelopeSchema)
    @blp.errors(deliveries.redeliver)
    def post(self, webhook_id, delivery_id):
        """Queue a new delivery of the same event to this endpoint"""
        return one(deliveries.redeliver(g.auth.tenant_id, webhook_id, delivery_id), 202)
