"""Pricing rules: create, read, list, update, delete; scope checks and RULE_CONFLICT."""

from decimal import Decimal
from typing import Any

from ..db import first_or_error, row_getter, write_transaction
from ..errors import ApiError, raises, validation_error
from ..ids import new_id
from ..jobs.services import lock_tenant
from ..marketplaces.services import connected_marketplaces
from ..pagination import filter_equal, paginate_args
from ..shapes import compile_serializer, field_names
from ..timeutil import now_ms
from .engine import find_conflict
from .models import PricingRule
from .shapes import RuleSchema
from .types import Rule

ALL = "all"
RULE_FIELDS = field_names(RuleSchema)
WRITABLE = (
    "name",
    "type",
    "value",
    "value_type",
    "applies_to",
    "category",
    "skus",
    "marketplace",
    "priority",
    "is_active",
)
SORT_FIELDS = {"created_at": PricingRule.created_at, "priority": PricingRule.priority}
HUNDRED = Decimal(100)


serialize_rule = compile_serializer(RuleSchema)


def to_engine_rule(row: PricingRule | dict[str, Any]) -> Rule:
    """A stored rule (model or row dict) as the engine's ``Rule``."""
    get = row_getter(row)
    return Rule(
        id=get("id"),
        name=get("name"),
        type=get("type"),
        value=Decimal(get("value")),
        value_type=get("value_type"),
        applies_to=get("applies_to"),
        category=get("category"),
        skus=frozenset(get("skus") or ()),
        marketplace=get("marketplace"),
        priority=get("priority"),
        created_at=get("created_at"),
        is_active=bool(get("is_active")),
    )


def active_rules(tenant_id: str, marketplace: str) -> list[Rule]:
    """The engine rules that can match on ``marketplace`` (its own and ``all``): one query."""
    rows = (
        PricingRule.select()
        .where(
            (PricingRule.tenant == tenant_id)
            & (PricingRule.is_active == True)  # noqa: E712
            & PricingRule.marketplace.in_([marketplace, ALL])
        )
        .dicts()
    )
    return [to_engine_rule(row) for row in rows]


# Checks ---------------------------------------------------------------------------------


def _check_rule(tenant_id, rule, changed):
    """Cross-field rules of DESIGN 6; ``changed`` names the fields the request gave."""
    errors = {}
    scope = rule["applies_to"]
    if scope == "category" and not rule.get("category"):
        errors["category"] = ["Required when applies_to is category."]
    if scope != "category" and rule.get("category") is not None:
        errors["category"] = ["Only with applies_to category."]
    if scope == "sku" and not rule.get("skus"):
        errors["skus"] = ["Required when applies_to is sku: 1 to 1,000 SKUs."]
    if scope != "sku" and rule.get("skus") is not None:
        errors["skus"] = ["Only with applies_to sku."]
    value, kind = Decimal(rule["value"]), rule["type"]
    if rule["value_type"] == "percent":
        if kind == "margin_target" and value >= HUNDRED:
            errors["value"] = ["A percent margin_target must be below 100."]
        elif value <= -HUNDRED:
            errors["value"] = ["A percentage must be above -100."]
    elif kind in ("floor", "ceiling") and value < 0:
        errors["value"] = ["A fixed floor or ceiling is a price: 0 or more."]
    marketplace = rule["marketplace"]
    if "marketplace" in changed and marketplace != ALL:
        connected = connected_marketplaces(tenant_id)
        if marketplace not in connected:
            errors["marketplace"] = [
                f"Must be 'all' or a connected marketplace ({', '.join(connected) or 'none'})."
            ]
    if errors:
        raise validation_error(errors, "The pricing rule is not valid.")


@raises("RULE_CONFLICT")
def _check_conflict(tenant_id, rule):
    """RULE_CONFLICT when an active rule of the same type and priority overlaps ``rule``."""
    if not rule["is_active"]:
        return
    candidate = to_engine_rule(rule)
    rows = (
        PricingRule.select()
        .where(
            (PricingRule.tenant == tenant_id)
            & (PricingRule.type == rule["type"])
            & (PricingRule.priority == rule["priority"])
            & (PricingRule.is_active == True)  # noqa: E712
            & (PricingRule.id != rule["id"])
        )
        .dicts()
    )
    other = find_conflict(candidate, [to_engine_rule(row) for row in rows])
    if other is not None:
        raise ApiError(
            "RULE_CONFLICT",
            f"The rule conflicts with the active {other.type} rule '{other.name}' ({other.id}) "
            f"at priority {other.priority}: their marketplaces and scopes overlap.",
            details={"rule_id": other.id, "type": other.type, "priority": other.priority},
        )


def _lock_tenant_rules(tenant_id):
    # PostgreSQL: rule writes of one tenant take turns on its row, so two concurrent
    # requests cannot both pass the conflict check (SQLite's immediate transaction does it)
    lock_tenant(tenant_id)


# Operations -----------------------------------------------------------------------------


@raises(_check_conflict)
def create_rule(tenant_id: str, data: dict[str, Any]) -> dict[str, Any]:
    now = now_ms()
    rule = {name: data.get(name) for name in WRITABLE}
    rule["skus"] = sorted(set(rule["skus"])) if rule.get("skus") is not None else None
    rule.update(id=new_id("rule"), created_at=now, updated_at=now)
    _check_rule(tenant_id, rule, changed=set(WRITABLE))
    with write_transaction():
        _lock_tenant_rules(tenant_id)
        _check_conflict(tenant_id, rule)
        PricingRule.create(tenant=tenant_id, **rule)
    return serialize_rule(rule)


@raises("RULE_NOT_FOUND")
def _rule_of(tenant_id, rule_id, lock=False):
    query = PricingRule.select().where(
        (PricingRule.id == rule_id) & (PricingRule.tenant == tenant_id)
    )
    return first_or_error(query.dicts(), "RULE_NOT_FOUND", {"rule_id": rule_id}, lock)


@raises(_rule_of)
def get_rule(tenant_id: str, rule_id: str) -> dict[str, Any]:
    return serialize_rule(_rule_of(tenant_id, rule_id))


@raises(_rule_of, _check_conflict)
def update_rule(tenant_id: str, rule_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    """Apply a partial update; the merged rule must be valid and free of conflicts.

    When ``applies_to`` changes, the scope fields of the old scope are cleared (giving one
    that does not fit the new scope is a VALIDATION_ERROR).
    """
    with write_transaction():
        _lock_tenant_rules(tenant_id)
        row = _rule_of(tenant_id, rule_id, lock=True)
        rule = dict(row)
        rule.pop("tenant", None)
        if "applies_to" in changes and changes["applies_to"] != row["applies_to"]:
            rule["category"] = None
            rule["skus"] = None
        rule.update(changes)
        if rule.get("skus") is not None:
            rule["skus"] = sorted(set(rule["skus"]))
        _check_rule(tenant_id, rule, changed=set(changes))
        updated = {name: rule[name] for name in WRITABLE if rule[name] != row[name]}
        if not updated:
            return serialize_rule(row)
        # a change of anything that decides a conflict, or a re-activation, is checked
        _check_conflict(tenant_id, rule)
        rule["updated_at"] = updated["updated_at"] = now_ms()
        PricingRule.update(**updated).where(PricingRule.id == rule_id).execute()
    return serialize_rule(rule)


@raises(_rule_of)
def delete_rule(tenant_id: str, rule_id: str) -> None:
    with write_transaction():
        _rule_of(tenant_id, rule_id, lock=True)
        PricingRule.delete().where(PricingRule.id == rule_id).execute()


@raises("INVALID_CURSOR")
def list_rules(tenant_id: str, args: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    query = PricingRule.select().where(PricingRule.tenant == tenant_id).dicts()
    query = filter_equal(query, PricingRule, args, ("type", "marketplace"))
    if args.get("is_active") is not None:
        query = query.where(PricingRule.is_active == args["is_active"])
    rows, meta = paginate_args(
        query,
        args,
        sort_field=SORT_FIELDS[args.get("sort") or "created_at"],
        tiebreak=PricingRule.id,
        kind="pricing_rules",
        scope=[tenant_id, args.get("type"), args.get("marketplace"), args.get("is_active")],
    )
    return [serialize_rule(row) for row in rows], meta
