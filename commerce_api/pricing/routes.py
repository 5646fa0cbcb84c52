"""Pricing API: /api/pricing (rules, recalculation, recommendations, competitor prices)."""

from flask import g
from flask.views import MethodView

from ..auth.middleware import require_scope
from ..http.blueprint import Blueprint
from ..http.envelope import list_page, no_content, one, resource_page
from . import competitors, recalculate, recommendations, rules
from .schemas import (
    COMPETITOR_FIELDS,
    CompetitorListArgsSchema,
    CompetitorListSchema,
    RecalculateEnvelopeSchema,
    RecalculateSchema,
    RecommendationEnvelopeSchema,
    RecommendationFieldsArgsSchema,
    RecommendationListArgsSchema,
    RecommendationListSchema,
    RuleCreateSchema,
    RuleEnvelopeSchema,
    RuleFieldsArgsSchema,
    RuleListArgsSchema,
    RuleListSchema,
    RuleUpdateSchema,
)

blp = Blueprint(
    "pricing",
    __name__,
    url_prefix="/api/pricing",
    description="Pricing rules, repricing jobs, price recommendations and competitor prices.",
)


# Rules ----------------------------------------------------------------------------------


@blp.route("/rules")
class RuleViews(MethodView):
    @require_scope("pricing:read")
    @blp.arguments(RuleListArgsSchema, location="query")
    @blp.returns(200, RuleListSchema)
    @blp.errors(rules.list_rules, "VALIDATION_ERROR")
    def get(self, args):
        """List pricing rules"""
        return list_page(args, rules.RULE_FIELDS, rules.list_rules, g.auth.tenant_id)

    @require_scope("pricing:write")
    @blp.arguments(RuleCreateSchema)
    @blp.returns(201, RuleEnvelopeSchema)
    @blp.errors(rules.create_rule, body=True)
    def post(self, data):
        """Create a pricing rule"""
        return one(rules.create_rule(g.auth.tenant_id, data), 201)


@blp.route("/rules/<string:rule_id>")
class RuleByIdViews(MethodView):
    @require_scope("pricing:read")
    @blp.arguments(RuleFieldsArgsSchema, location="query")
    @blp.returns(200, RuleEnvelopeSchema)
    @blp.errors(rules.get_rule, "VALIDATION_ERROR")
    def get(self, args, rule_id):
        """Get a pricing rule"""
        return resource_page(args, rules.RULE_FIELDS, rules.get_rule, g.auth.tenant_id, rule_id)

    @require_scope("pricing:write")
    @blp.arguments(RuleUpdateSchema)
    @blp.returns(200, RuleEnvelopeSchema)
    @blp.errors(rules.update_rule, body=True)
    def patch(self, data, rule_id):
        """Update a pricing rule (re-activating one checks RULE_CONFLICT)"""
        return one(rules.update_rule(g.auth.tenant_id, rule_id, data))

    @require_scope("pricing:write")
    @blp.returns(204)
    @blp.errors(rules.delete_rule)
    def delete(self, rule_id):
        """Delete a pricing rule"""
        rules.delete_rule(g.auth.tenant_id, rule_id)
        return no_content()


# Recalculation --------------------------------------------------------------------------


@blp.route("/recalculate")
class RecalculateViews(MethodView):
    @require_scope("pricing:write")
    @blp.arguments(RecalculateSchema)
    @blp.returns(200, RecalculateEnvelopeSchema)
    @blp.errors("MARKETPLACE_NOT_CONNECTED", "QUEUE_FULL", body=True)
    def post(self, data):
        """Recompute prices in a pricing_recalculate job (poll it at /api/ai-jobs/:id)"""
        result = recalculate.request_recalculation(g.auth.tenant_id, data, g.auth.created_by)
        return one(result)


# Recommendations ------------------------------------------------------------------------


@blp.route("/recommendations")
class RecommendationViews(MethodView):
    @require_scope("pricing:read")
    @blp.arguments(RecommendationListArgsSchema, location="query")
    @blp.returns(200, RecommendationListSchema)
    @blp.errors(recommendations.list_recommendations, "VALIDATION_ERROR")
    def get(self, args):
        """List price recommendations, newest first"""
        return list_page(
            args,
            recommendations.RECOMMENDATION_FIELDS,
            recommendations.list_recommendations,
            g.auth.tenant_id,
        )


@blp.route("/recommendations/<string:recommendation_id>")
class RecommendationByIdViews(MethodView):
    @require_scope("pricing:read")
    @blp.arguments(RecommendationFieldsArgsSchema, location="query")
    @blp.returns(200, RecommendationEnvelopeSchema)
    @blp.errors(recommendations.get_recommendation, "VALIDATION_ERROR")
    def get(self, args, recommendation_id):
        """Get a price recommendation"""
        return resource_page(
            args,
            recommendations.RECOMMENDATION_FIELDS,
            recommendations.get_recommendation,
            g.auth.tenant_id,
            recommendation_id,
        )


@blp.route("/recommendations/<string:recommendation_id>/apply")
class RecommendationApplyViews(MethodView):
    @require_scope("pricing:write")
    @blp.returns(200, RecommendationEnvelopeSchema)
    @blp.errors(recommendations.apply_recommendation)
    def post(self, recommendation_id):
        """Apply a recommendation: push the price to the marketplace now"""
        return one(
            recommendations.apply_recommendation(
                g.auth.tenant_id, recommendation_id, g.auth.created_by
            )
        )


@blp.route("/recommendations/<string:recommendation_id>/dismiss")
class RecommendationDismissViews(MethodView):
    @require_scope("pricing:write")
    @blp.returns(200, RecommendationEnvelopeSchema)
    @blp.errors(recommendations.dismiss_recommendation)
    def post(self, recommendation_id):
        """Dismiss a pending recommendation"""
        return one(recommendations.dismiss_recommendation(g.auth.tenant_id, recommendation_id))


# Competitor prices ----------------------------------------------------------------------


@blp.route("/competitors")
class CompetitorViews(MethodView):
    @require_scope("pricing:read")
    @blp.arguments(CompetitorListArgsSchema, location="query")
    @blp.returns(200, CompetitorListSchema)
    @blp.errors("INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List the latest offer of each competitor"""
        return list_page(
            args, COMPETITOR_FIELDS, competitors.list_competitor_prices, g.auth.tenant_id
        )
