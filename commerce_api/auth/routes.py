"""API keys over HTTP: /api/api-keys (what the web frontend's Settings > API Keys needs)."""

from flask import g
from flask.views import MethodView

from ..errors import ApiError
from ..http.blueprint import Blueprint
from ..http.envelope import list_page, no_content, one, resource_page
from ..http.idempotency import shown_once
from ..http.ratelimit import PLAN_LIMITS, limits_for
from . import services
from .middleware import require_scope
from .schemas import (
    KEY_FIELDS,
    ApiKeyCreateSchema,
    ApiKeyDeleteArgsSchema,
    ApiKeyEnvelopeSchema,
    ApiKeyFieldsArgsSchema,
    ApiKeyListArgsSchema,
    ApiKeyListSchema,
    ApiKeyUpdateSchema,
    ApiKeyWithSecretEnvelopeSchema,
)

blp = Blueprint(
    "api-keys",
    __name__,
    url_prefix="/api/api-keys",
    description="The tenant's API keys: create (the secret is shown once), list, change, "
    "revoke. Changes are in force from the next request, on every server.",
)


def _caller_limits():
    """What a key made or changed by this caller must stay within: the calling key's
    expiry and allowlist, and the caller's own rate limit (a user JWT: the plan's)."""
    per_minute, per_hour = limits_for(g.auth)
    return services.KeyLimits(
        expires_at=g.auth.expires_at,
        networks=g.auth.networks,
        per_minute=per_minute,
        per_hour=per_hour,
    )


def _plan_limits():
    """(per minute, per hour) a key without overrides gets on the tenant's plan."""
    minute, hour = PLAN_LIMITS.get(g.auth.plan, PLAN_LIMITS["starter"])
    return minute.amount, hour.amount


def _key(tenant_id, key_id):
    return services.serialize_key(services.get_key(tenant_id, key_id))


@blp.route("")
class ApiKeyViews(MethodView):
    @require_scope("api-keys:read")
    @blp.arguments(ApiKeyListArgsSchema, location="query")
    @blp.returns(200, ApiKeyListSchema)
    @blp.errors(services.page_keys, "VALIDATION_ERROR")
    def get(self, args):
        """List the tenant's API keys (never their secrets)"""
        return list_page(args, KEY_FIELDS, services.page_keys, g.auth.tenant_id)

    @require_scope("api-keys:write")
    @blp.arguments(ApiKeyCreateSchema)
    @blp.returns(201, ApiKeyWithSecretEnvelopeSchema)
    @blp.errors("SCOPE_ESCALATION", "RESTRICTION_ESCALATION", "PLAN_REQUIRED", body=True)
    def post(self, data):
        """Create an API key (its secret is shown only in this answer)"""
        key, secret = services.create_key(
            g.auth.tenant_id,
            data["name"],
            data["scopes"],
            expires_at=data.get("expires_at"),
            allowed_ips=data.get("allowed_ips"),
            rate_limit_per_minute=data.get("rate_limit_per_minute"),
            rate_limit_per_hour=data.get("rate_limit_per_hour"),
            granted_by=g.auth.scopes,
            limits=_caller_limits(),
            plan_limits=_plan_limits(),
        )
        body = {**services.serialize_key(key), "key": secret}
        shown_once("key")  # an idempotent replay of this answer shows ``key`` null
        return one(body, 201, headers={"Location": f"/api/api-keys/{key.id}"})


@blp.route("/<string:key_id>")
class ApiKeyByIdViews(MethodView):
    @require_scope("api-keys:read")
    @blp.arguments(ApiKeyFieldsArgsSchema, location="query")
    @blp.returns(200, ApiKeyEnvelopeSchema)
    @blp.errors(services.get_key, "VALIDATION_ERROR")
    def get(self, args, key_id):
        """Get an API key (never its secret)"""
        return resource_page(args, KEY_FIELDS, _key, g.auth.tenant_id, key_id)

    @require_scope("api-keys:write")
    @blp.arguments(ApiKeyUpdateSchema)
    @blp.returns(200, ApiKeyEnvelopeSchema)
    @blp.errors(services.update_key, body=True)
    def patch(self, data, key_id):
        """Rename an API key, change its expiry or IP allowlist, or narrow its scopes"""
        key = services.update_key(
            key_id,
            tenant_id=g.auth.tenant_id,
            granted_by=g.auth.scopes,
            limits=_caller_limits(),
            **data,
        )
        return one(services.serialize_key(key))

    @require_scope("api-keys:write")
    @blp.arguments(ApiKeyDeleteArgsSchema, location="query")
    @blp.returns(204)
    @blp.errors(services.get_key, "CONFIRMATION_REQUIRED", services.revoke_key)
    def delete(self, args, key_id):
        """Revoke an API key (the calling key itself only with `?confirm=self`)"""
        key = services.get_key(g.auth.tenant_id, key_id)
        calling = g.auth.kind == "api_key" and g.auth.principal_id == key.id
        if calling and args.get("confirm") != "self":
            raise ApiError(
                "CONFIRMATION_REQUIRED",
                "This request would revoke the key it is made with; add ?confirm=self.",
                details={"id": key.id, "confirm": "self"},
            )
        services.revoke_key(key.id, g.auth.tenant_id, granted_by=g.auth.scopes)
        return no_content()
