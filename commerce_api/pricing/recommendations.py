"""Price recommendations: read, list, apply (synchronous price push), dismiss."""

from collections.abc import Sequence
from typing import Any

from ..claims import Claim, claimed
from ..db import first_or_error, write_transaction
from ..errors import ApiError, raises
from ..events import emit
from ..marketplaces.base import ConnectorError
from ..marketplaces.calls import api_error
from ..marketplaces.models import MarketplaceConnection
from ..marketplaces.prices import AcceptedPrice, push_price, record_pushed_prices
from ..marketplaces.services import connection_for
from ..pagination import filter_equal, paginate_args
from ..products import desired_state
from ..products.models import Listing, Product
from ..shapes import compile_serializer, field_names
from ..sql import PreparedIn
from ..timeutil import format_ms, now_ms
from ..totals import maintained
from .models import Recommendation
from .shapes import RecommendationSchema

APPLY = "apply_recommendation"  # the operation of a recommendation's claim

RECOMMENDATION_FIELDS = field_names(RecommendationSchema)


serialize_recommendation = compile_serializer(RecommendationSchema)


LISTING_COLUMNS = (
    Listing.id.alias("listing_id"),
    Listing.price.alias("listing_price"),
    Listing.currency,
    Listing.quantity,
    Listing.price_version.alias("listing_price_version"),
)
PRODUCT_COLUMNS = (
    Product.id,
    Product.sku,
    Product.title,
    Product.description,
    Product.status,
    Product.gtin,
    Product.category,
    Product.cost_price,
    Product.weight_kg,
    Product.images,
)


def _listed_query(tenant_id, marketplace, skus):
    return (
        Product.select(*PRODUCT_COLUMNS, *LISTING_COLUMNS)
        .join(Listing, on=(Listing.product == Product.id))
        .where(
            (Product.tenant == tenant_id)
            & (Listing.marketplace == marketplace)
            & Product.sku.in_(skus)
        )
    )


_listed = PreparedIn(_listed_query, 2)
_listing_price = Listing.price.python_value


def listed_products(
    tenant_id: str, marketplace: str, skus: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """``{sku: row}`` of the products with a listing on ``marketplace``: one query.

    Each row has the product's columns plus ``listing_id``, ``listing_price``,
    ``currency``, ``quantity`` and ``listing_price_version``.
    """
    listed = {}
    for row in _listed.dicts(tenant_id, marketplace, values=skus):
        if row["listing_price"] is not None:  # an alias: not converted by its field
            row["listing_price"] = _listing_price(row["listing_price"])
        listed[row["sku"]] = row
    return listed


@raises("RECOMMENDATION_NOT_FOUND")
def _recommendation_of(tenant_id, recommendation_id, lock=False):
    query = Recommendation.select().where(
        (Recommendation.id == recommendation_id) & (Recommendation.tenant == tenant_id)
    )
    details = {"recommendation_id": recommendation_id}
    return first_or_error(query.dicts(), "RECOMMENDATION_NOT_FOUND", details, lock)


def _check_pending(row):
    if row["status"] == "applied":
        raise ApiError(
            "RECOMMENDATION_ALREADY_APPLIED",
            details={"recommendation_id": row["id"], "applied_at": format_ms(row["applied_at"])},
        )
    if row["status"] != "pending":
        raise ApiError(
            "RECOMMENDATION_NOT_PENDING",
            f"The recommendation is {row['status']}.",
            details={"recommendation_id": row["id"], "status": row["status"]},
        )


@raises(_recommendation_of)
def get_recommendation(tenant_id: str, recommendation_id: str) -> dict[str, Any]:
    return serialize_recommendation(_recommendation_of(tenant_id, recommendation_id))


@raises("INVALID_CURSOR")
def list_recommendations(
    tenant_id: str, args: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    query = Recommendation.select().where(Recommendation.tenant == tenant_id).dicts()
    query = filter_equal(query, Recommendation, args, ("status", "marketplace", "sku"))
    if args.get("min_confidence") is not None:
        query = query.where(Recommendation.confidence >= args["min_confidence"])
    rows, meta = paginate_args(
        query,
        args,
        sort_field=Recommendation.created_at,
        tiebreak=Recommendation.id,
        kind="pricing_recommendations",
        total=None
        if args.get("marketplace") or args.get("sku") or args.get("min_confidence") is not None
        else maintained(tenant_id, "pricing_recommendations", args.get("status") or None),
        scope=[tenant_id]
        + [args.get(name) for name in ("status", "marketplace", "sku", "min_confidence")],
    )
    return [serialize_recommendation(row) for row in rows], meta


def _listing_or_409(tenant_id, row):
    listed = listed_products(tenant_id, row["marketplace"], [row["sku"]])
    product = listed.get(row["sku"])
    if product is None:
        raise ApiError(
            "LISTING_NOT_FOUND",
            f"{row['sku']} is no longer listed on {row['marketplace']}.",
            details={
                "recommendation_id": row["id"],
                "sku": row["sku"],
                "marketplace": row["marketplace"],
            },
        )
    return product


def require_connection_of(tenant_id: str, row: dict[str, Any]) -> MarketplaceConnection:
    connection = connection_for(tenant_id, row["marketplace"])
    if connection is None:
        raise ApiError(
            "MARKETPLACE_NOT_CONNECTED",
            f"The marketplace {row['marketplace']} is not connected for this tenant.",
            details={"marketplace": row["marketplace"], "recommendation_id": row["id"]},
        )
    return connection


@raises(
    _recommendation_of,
    "RECOMMENDATION_ALREADY_APPLIED",
    "RECOMMENDATION_NOT_PENDING",
    "CONCURRENT_UPDATE",
    "LISTING_NOT_FOUND",
    "MARKETPLACE_NOT_CONNECTED",
    "MARKETPLACE_REJECTION",
    "MARKETPLACE_UNAVAILABLE",
    "RECOMMENDATION_OUTDATED",
)
def apply_recommendation(tenant_id: str, recommendation_id: str, created_by: str) -> dict[str, Any]:
    """Claim the recommendation, push its price to the marketplace, then record it applied.

    A concurrent apply gets 409 ``CONCURRENT_UPDATE`` and causes no push. The push is
    synchronous and made with no transaction open; a rejection (422) or an unreachable
    marketplace (503) changes nothing but the product's sync history.
    """
    _check_pending(_recommendation_of(tenant_id, recommendation_id))
    with claimed(tenant_id, recommendation_id, APPLY) as claim:
        # read again under the claim: an apply that finished just before has applied it
        row = _recommendation_of(tenant_id, recommendation_id)
        _check_pending(row)
        product = _listing_or_409(tenant_id, row)
        connection = require_connection_of(tenant_id, row)
        return push_recommendation(tenant_id, row, product, connection, claim, created_by)


def push_recommendation(
    tenant_id: str,
    row: dict[str, Any],
    product: dict[str, Any],
    connection: MarketplaceConnection,
    claim: Claim,
    created_by: str,
    details: dict[str, Any] | None = None,
    pushed_at: int | None = 0,
    price_version: int | None = None,
) -> dict[str, Any]:
    """Push the recommended price (``Idempotency-Key``: the recommendation's id, so a
    retried push is recognised), then record the outcome; the caller holds ``claim``.

    ``pushed_at``: when the first push of this price began, if an earlier try may have
    landed (None: not known); 0, the default: now. ``price_version``: the listing's price
    version the push was decided on (None: not checked); a newer one at the record means
    a newer price came while this one was pushed (``record_applied``).

    Raises the API's error (422 ``MARKETPLACE_REJECTION``, 503 ``MARKETPLACE_UNAVAILABLE``)
    when the push fails.
    """
    if pushed_at == 0:
        pushed_at = now_ms()
    try:
        push_price(
            connection,
            product,
            row["recommended_price"],
            idempotency_key=row["id"],
            created_by=created_by,
            details={"recommendation_id": row["id"], **(details or {})},
        )
    except ConnectorError as exc:
        raise api_error(connection, "push_price", exc) from None
    return record_applied(tenant_id, row["id"], claim, pushed_at, price_version)


def outdated_error(row: dict[str, Any], current: int) -> ApiError:
    return ApiError(
        "RECOMMENDATION_OUTDATED",
        f"The listing of {row['sku']} on {row['marketplace']} took a newer price since this"
        " recommendation was computed; it was not applied.",
        details={
            "recommendation_id": row["id"],
            "listing_price_version": row.get("listing_price_version"),
            "current_price_version": current,
        },
    )


def drop_outdated(
    tenant_id: str, row: dict[str, Any], listing_id: str, claim: Claim, maybe_landed: bool
) -> None:
    """Inside the caller's transaction: an outdated price push is given up. The
    recommendation, if still pending, is dismissed (a newer price superseded it), the
    claim released, and when an earlier try may have reached the marketplace the listing
    becomes pending, so that its current price is pushed over it."""
    if maybe_landed:
        desired_state.push_again([listing_id])
    now = now_ms()
    Recommendation.update(status="dismissed", dismissed_at=now, updated_at=now).where(
        (Recommendation.id == row["id"])
        & (Recommendation.tenant == tenant_id)
        & (Recommendation.status == "pending")
    ).execute()
    claim.release()


def record_applied(
    tenant_id: str,
    recommendation_id: str,
    claim: Claim,
    pushed_at: int | None = None,
    price_version: int | None = None,
) -> dict[str, Any]:
    """The marketplace accepted the price: the listing takes it, the recommendation is
    applied as of now, and the claim is released, in one transaction (``pushed_at``: see
    ``marketplaces.prices.AcceptedPrice``).

    With ``price_version``, a listing that took a newer price while this one was pushed
    keeps it (and is pushed again over ours): 409 ``RECOMMENDATION_OUTDATED``."""
    now = now_ms()
    outdated = None
    with write_transaction():
        row = _recommendation_of(tenant_id, recommendation_id, lock=True)
        if row["status"] == "applied":  # applied by another holder once our lease ran out
            _check_pending(row)
        # the listing row is locked by the UPDATE alone: locking the product and listing
        # rows of the join here deadlocked (PostgreSQL soak) with a stock change that
        # marks the listing pending while it holds the product's rows
        product = _listing_or_409(tenant_id, row)
        current = product["listing_price_version"]
        if price_version is not None and current != price_version:
            drop_outdated(tenant_id, row, product["listing_id"], claim, maybe_landed=True)
            outdated = outdated_error(row, current)
        else:
            body = _record_accepted(tenant_id, row, product, claim, now, pushed_at)
    if outdated is not None:
        raise outdated
    return body


def _record_accepted(tenant_id, row, product, claim, now, pushed_at):
    """``record_applied``'s writes, in its transaction."""
    accepted = AcceptedPrice(product["listing_id"], row["recommended_price"], now, pushed_at)
    record_pushed_prices([accepted])
    # the marketplace has the price now, even if the recommendation was dismissed
    # while the push was under way: the record follows what the marketplace shows
    Recommendation.update(
        status="applied", applied_at=now, updated_at=now, dismissed_at=None
    ).where(Recommendation.id == row["id"]).execute()
    row.update(status="applied", applied_at=now, updated_at=now, dismissed_at=None)
    body = serialize_recommendation(row)
    emit(tenant_id, "pricing.recommendation.applied", "recommendation", row["id"], body)
    claim.release()
    return body


@raises(_recommendation_of, "RECOMMENDATION_NOT_PENDING")
def dismiss_recommendation(tenant_id: str, recommendation_id: str) -> dict[str, Any]:
    with write_transaction():
        row = _recommendation_of(tenant_id, recommendation_id, lock=True)
        if row["status"] != "pending":
            raise ApiError(
                "RECOMMENDATION_NOT_PENDING",
                f"The recommendation is {row['status']}.",
                details={"recommendation_id": row["id"], "status": row["status"]},
            )
        now = now_ms()
        Recommendation.update(status="dismissed", dismissed_at=now, updated_at=now).where(
            Recommendation.id == row["id"]
        ).execute()
        row.update(status="dismissed", dismissed_at=now, updated_at=now)
    return serialize_recommendation(row)
