"""Orders (filters, detail with sync history, ship, cancel) and Pricing (rules,
recommendations: apply, dismiss)."""

from flask import request

from .gateway import segment
from .web import (
    api,
    args_of,
    bp,
    done,
    first_error,
    form_number,
    form_text,
    present,
    render,
    status_of,
)

LIST_LIMIT = 25
ORDER_STATUSES = ("pending", "processing", "shipped", "delivered", "cancelled", "returned")
CANCEL_REASONS = ("customer_request", "out_of_stock", "pricing_error", "fraud_suspected", "other")
RULE_TYPES = ("floor", "ceiling", "competitor_match", "buy_box_target", "margin_target")


@bp.route("/orders")
def orders():
    """Orders: filters and pages by cursor."""
    query = args_of("status", "marketplace", "external_order_id", "sku", "cursor")
    answer = api("GET", "/api/orders", {**query, "limit": LIST_LIMIT})
    return render(
        "console/orders.html",
        status_of(answer),
        answer=answer,
        query=query,
        statuses=ORDER_STATUSES,
        errors=[answer.error],
    )


def _order_page(order_id, status=200, errors=(), form=None):
    answer = api("GET", f"/api/orders/{segment(order_id)}")
    return render(
        "console/order.html",
        status if status != 200 else status_of(answer),
        order_id=order_id,
        answer=answer,
        reasons=CANCEL_REASONS,
        form=form or {},
        errors=[*errors, answer.error],
    )


@bp.route("/orders/<string:order_id>")
def order(order_id):
    """An order with its lines, address, shipment and sync history."""
    return _order_page(order_id)


@bp.route("/orders/<string:order_id>/ship", methods=["POST"])
def ship_order(order_id):
    """Confirm the shipment with the marketplace (carrier and tracking number)."""
    body = present(carrier=form_text("carrier"), tracking_number=form_text("tracking_number"))
    answer = api("POST", f"/api/orders/{segment(order_id)}/shipment", body=body)
    if answer.ok:
        return done("console.order", "shipped", order_id=order_id)
    return _order_page(order_id, answer.status, [answer.error], request.form)


@bp.route("/orders/<string:order_id>/cancel", methods=["POST"])
def cancel_order(order_id):
    """Cancel the order with a reason."""
    body = present(reason=form_text("reason"))
    answer = api("POST", f"/api/orders/{segment(order_id)}/cancel", body=body)
    if answer.ok:
        return done("console.order", "cancelled", order_id=order_id)
    return _order_page(order_id, answer.status, [answer.error], request.form)


def _pricing_page(status=200, errors=(), form=None):
    query = args_of("status", "sku", "cursor")
    query.setdefault("status", "pending")
    recommendations = api("GET", "/api/pricing/recommendations", {**query, "limit": LIST_LIMIT})
    rules = api("GET", "/api/pricing/rules", {"limit": 50})
    return render(
        "console/pricing.html",
        status if status != 200 else status_of(recommendations, rules),
        recommendations=recommendations,
        rules=rules,
        query=query,
        rule_types=RULE_TYPES,
        form=form or {},
        errors=[*errors, first_error(recommendations, rules)],
    )


@bp.route("/pricing")
def pricing():
    """Pricing rules and recommendations."""
    return _pricing_page()


@bp.route(
    "/pricing/recommendations/<string:recommendation_id>/<any(apply, dismiss):action>",
    methods=["POST"],
)
def decide_recommendation(recommendation_id, action):
    """Apply a recommendation (the price goes to the marketplace) or dismiss it."""
    path = f"/api/pricing/recommendations/{segment(recommendation_id)}/{action}"
    answer = api("POST", path)
    if answer.ok:
        return done("console.pricing", "applied" if action == "apply" else "dismissed")
    return _pricing_page(answer.status, [answer.error])


@bp.route("/pricing/rules", methods=["POST"])
def create_rule():
    """Create a pricing rule."""
    body = present(
        name=form_text("name"),
        type=form_text("type"),
        value=form_number("value"),
        value_type=form_text("value_type"),
        applies_to=form_text("applies_to"),
        category=form_text("category"),
        marketplace=form_text("marketplace"),
    )
    answer = api("POST", "/api/pricing/rules", body=body)
    if answer.ok:
        return done("console.pricing", "rule-created")
    return _pricing_page(answer.status, [answer.error], request.form)
