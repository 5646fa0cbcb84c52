"""Settings: API keys, Notifications (webhook endpoints) and Marketplaces."""

from flask import request

from ..auth.models import SCOPES
from ..events.catalogue import SUBSCRIBABLE
from .gateway import segment
from .web import api, args_of, bp, done, first_error, form_text, present, render, status_of

CONNECTORS = ("sandbox", "http")


# -- API keys ------------------------------------------------------------------------------


def _keys_page(status=200, errors=(), created=None, form=None):
    query = args_of("cursor")
    answer = api("GET", "/api/api-keys", {**query, "limit": 25, "revoked": "false"})
    return render(
        "console/api_keys.html",
        status if status != 200 else status_of(answer),
        answer=answer,
        query=query,
        all_scopes=SCOPES,
        created=created,
        form=form or {},
        errors=[*errors, answer.error],
    )


@bp.route("/settings/api-keys")
def api_keys():
    """The tenant's live API keys and the form that creates one."""
    return _keys_page()


@bp.route("/settings/api-keys", methods=["POST"])
def create_api_key():
    """Create a key: its secret is on this one page and nowhere else, ever."""
    body = present(name=form_text("name"), scopes=request.form.getlist("scopes"))
    answer = api("POST", "/api/api-keys", body=body)
    if answer.ok:
        return _keys_page(201, created=answer.data)
    return _keys_page(answer.status, [answer.error], form=request.form)


@bp.route("/settings/api-keys/<string:key_id>/scopes", methods=["POST"])
def narrow_api_key(key_id):
    """Narrow a key's scopes (never widen: the API refuses)."""
    body = {"scopes": request.form.getlist("scopes")}
    answer = api("PATCH", f"/api/api-keys/{segment(key_id)}", body=body)
    if answer.ok:
        return done("console.api_keys", "narrowed")
    return _keys_page(answer.status, [answer.error])


@bp.route("/settings/api-keys/<string:key_id>/revoke", methods=["POST"])
def revoke_api_key(key_id):
    """Revoke a key (the one signed in with only when confirmed)."""
    query = {"confirm": "self"} if request.form.get("confirm_self") else None
    answer = api("DELETE", f"/api/api-keys/{segment(key_id)}", query=query)
    if answer.ok:
        return done("console.api_keys", "revoked")
    return _keys_page(answer.status, [answer.error])


# -- Notifications (webhooks) --------------------------------------------------------------


def _endpoints_page(status=200, errors=(), created=None, form=None):
    query = args_of("cursor")
    answer = api("GET", "/api/webhooks", {**query, "limit": 25})
    return render(
        "console/webhooks.html",
        status if status != 200 else status_of(answer),
        answer=answer,
        query=query,
        event_types=SUBSCRIBABLE,
        created=created,
        form=form or {},
        errors=[*errors, answer.error],
    )


@bp.route("/settings/notifications")
def webhooks():
    """The tenant's webhook endpoints and the form that registers one."""
    return _endpoints_page()


@bp.route("/settings/notifications", methods=["POST"])
def create_webhook():
    """Register an endpoint: its signing secret is shown on this page only."""
    body = present(
        url=form_text("url"),
        events=request.form.getlist("events"),
        description=form_text("description"),
    )
    answer = api("POST", "/api/webhooks", body=body)
    if answer.ok:
        return _endpoint_page(answer.data["id"], 201, secret=answer.data.get("secret"))
    return _endpoints_page(answer.status, [answer.error], form=request.form)


def _endpoint_page(webhook_id, status=200, errors=(), secret=None):
    endpoint = api("GET", f"/api/webhooks/{segment(webhook_id)}")
    query = args_of("status", "cursor")
    deliveries = None
    if endpoint.ok:
        path = f"/api/webhooks/{segment(webhook_id)}/deliveries"
        deliveries = api("GET", path, {**query, "limit": 25})
    return render(
        "console/webhook.html",
        status if status != 200 else status_of(endpoint, deliveries),
        webhook_id=webhook_id,
        endpoint=endpoint,
        deliveries=deliveries,
        query=query,
        secret=secret,
        errors=[*errors, first_error(endpoint, deliveries)],
    )


@bp.route("/settings/notifications/<string:webhook_id>")
def webhook(webhook_id):
    """An endpoint: its delivery log and its actions (test, rotate, recover, disable)."""
    return _endpoint_page(webhook_id)


ENDPOINT_ACTIONS = {"test": "tested", "rotate-secret": None, "recover": "recovered"}


@bp.route(
    "/settings/notifications/<string:webhook_id>/<any(test, 'rotate-secret', recover):action>",
    methods=["POST"],
)
def webhook_action(webhook_id, action):
    """Send a test event, rotate the secret (the new one shown once) or recover since."""
    body = present(since=form_text("since")) if action == "recover" else None
    answer = api("POST", f"/api/webhooks/{segment(webhook_id)}/{action}", body=body)
    if not answer.ok:
        return _endpoint_page(webhook_id, answer.status, [answer.error])
    if action == "rotate-secret":
        return _endpoint_page(webhook_id, secret=(answer.data or {}).get("secret"))
    return done("console.webhook", ENDPOINT_ACTIONS[action], webhook_id=webhook_id)


@bp.route("/settings/notifications/<string:webhook_id>/active", methods=["POST"])
def webhook_active(webhook_id):
    """Disable or enable an endpoint."""
    active = request.form.get("is_active") == "true"
    body = {"is_active": active}
    answer = api("PATCH", f"/api/webhooks/{segment(webhook_id)}", body=body)
    if answer.ok:
        notice = "enabled" if active else "disabled"
        return done("console.webhook", notice, webhook_id=webhook_id)
    return _endpoint_page(webhook_id, answer.status, [answer.error])


@bp.route("/settings/notifications/<string:webhook_id>/deliveries/<string:delivery_id>")
def delivery(webhook_id, delivery_id):
    """A delivery: its attempts (status, time, error) and the body it carries."""
    path = f"/api/webhooks/{segment(webhook_id)}/deliveries/{segment(delivery_id)}"
    answer = api("GET", path)
    event = api("GET", f"/api/events/{segment(answer.data['event_id'])}") if answer.ok else None
    return render(
        "console/delivery.html",
        status_of(answer),
        webhook_id=webhook_id,
        answer=answer,
        event=event,
        errors=[first_error(answer, event)],
    )


@bp.route(
    "/settings/notifications/<string:webhook_id>/deliveries/<string:delivery_id>/redeliver",
    methods=["POST"],
)
def redeliver(webhook_id, delivery_id):
    """Send a delivery again (a new delivery of the same event)."""
    path = f"/api/webhooks/{segment(webhook_id)}/deliveries/{segment(delivery_id)}/redeliver"
    answer = api("POST", path)
    if answer.ok:
        return done("console.webhook", "redelivered", webhook_id=webhook_id)
    return _endpoint_page(webhook_id, answer.status, [answer.error])


# -- Marketplaces --------------------------------------------------------------------------


def _connections_page(status=200, errors=(), form=None):
    answer = api("GET", "/api/marketplaces", {"limit": 50})
    return render(
        "console/marketplaces.html",
        status if status != 200 else status_of(answer),
        answer=answer,
        connectors=CONNECTORS,
        form=form or {},
        errors=[*errors, answer.error],
    )


@bp.route("/settings/marketplaces")
def marketplaces():
    """The tenant's marketplace connections and the form that connects one."""
    return _connections_page()


@bp.route("/settings/marketplaces", methods=["POST"])
def connect_marketplace():
    """Connect a marketplace (sandbox, or the HTTP connector with its URL and token)."""
    body = present(
        marketplace=form_text("marketplace"),
        connector=form_text("connector"),
        base_url=form_text("base_url"),
        api_token=form_text("api_token"),
    )
    answer = api("POST", "/api/marketplaces", body=body)
    if answer.ok:
        return done("console.marketplace", "connected", connection_id=answer.data["id"])
    return _connections_page(answer.status, [answer.error], request.form)


@bp.route("/settings/marketplaces/<string:connection_id>")
def marketplace(connection_id):
    """Check a connection: its status, last pull and error, and its recent sync history."""
    answer = api("GET", f"/api/marketplaces/{segment(connection_id)}")
    history = None
    if answer.ok:
        query = {"marketplace": answer.data["marketplace"], "limit": 25}
        history = api("GET", "/api/marketplaces/sync-history", query)
    return render(
        "console/marketplace.html",
        status_of(answer),
        answer=answer,
        history=history,
        errors=[first_error(answer, history)],
    )


@bp.route("/settings/marketplaces/<string:connection_id>/status", methods=["POST"])
def marketplace_status(connection_id):
    """Disable a connection, or make it active again."""
    status = "active" if request.form.get("status") == "active" else "disabled"
    answer = api("PATCH", f"/api/marketplaces/{segment(connection_id)}", body={"status": status})
    if answer.ok:
        return done("console.marketplace", "status-changed", connection_id=connection_id)
    return _connections_page(answer.status, [answer.error])
