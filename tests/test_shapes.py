"""shapes.compile_serializer: a response schema made into the serializer of its resource."""

from decimal import Decimal

import marshmallow as ma
import pytest

from commerce_api.products.models import Product
from commerce_api.shapes import (
    AS_STORED,
    ShapeError,
    compile_serializer,
    compile_shape,
    documented_required,
    field_names,
)

pytestmark = pytest.mark.engine_free  # the same on either engine: the SQLite pass runs it


class Inner(ma.Schema):
    name = ma.fields.String()
    at = ma.fields.DateTime(allow_none=True)


class Outer(ma.Schema):
    id = ma.fields.String()
    shown_as = ma.fields.String(attribute="stored_as", data_key="shown")
    price = ma.fields.Float(allow_none=True)
    count = ma.fields.Integer()
    flag = ma.fields.Boolean()
    created_at = ma.fields.DateTime()
    tags = ma.fields.List(ma.fields.String())
    maybe_tags = ma.fields.List(ma.fields.String(), allow_none=True)
    inner = ma.fields.Nested(Inner, allow_none=True)
    inners = ma.fields.List(ma.fields.Nested(Inner))
    stored = ma.fields.Nested(Inner, metadata={AS_STORED: True})
    password = ma.fields.String(load_only=True)
    settings = ma.fields.Dict()
    maybe = ma.fields.Boolean(allow_none=True)


ROW = {
    "id": "x_1",
    "stored_as": "s",
    "price": Decimal("12.50"),
    "count": 3,
    "flag": 1,
    "created_at": 1_700_000_000_123,
    "tags": None,
    "maybe_tags": None,
    "inner": {"name": "a", "at": 0},
    "inners": [{"name": "b", "at": None}],
    "stored": {"kept": "as is", "at": 5},
    "password": "never shown",
    "settings": None,
    "maybe": 0,
}


def test_each_field_type_has_its_converter_and_the_order_is_the_schema_s():
    data = compile_serializer(Outer)(ROW)
    assert data == {
        "id": "x_1",
        "shown": "s",
        "price": 12.5,
        "count": 3,
        "flag": True,
        "created_at": "2023-11-14T22:13:20.123Z",
        "tags": [],
        "maybe_tags": None,
        "inner": {"name": "a", "at": "1970-01-01T00:00:00.000Z"},
        "inners": [{"name": "b", "at": None}],
        "stored": {"kept": "as is", "at": 5},
        "settings": {},
        "maybe": False,
    }
    assert list(data) == list(field_names(Outer))
    assert type(data["price"]) is float and type(data["flag"]) is bool


def test_none_stays_none_and_every_number_of_a_float_field_is_a_float():
    row = {**ROW, "price": None, "created_at": None, "inner": None, "maybe": None}
    data = compile_serializer(Outer)(row)
    assert (data["price"], data["created_at"], data["inner"], data["maybe"]) == (None,) * 4
    assert repr(compile_serializer(Outer)({**ROW, "price": 2})["price"]) == "2.0"


def test_a_field_that_is_never_null_shows_its_empty_value_for_none():
    row = {**ROW, "flag": None, "tags": None, "settings": None}
    data = compile_serializer(Outer)(row)
    assert (data["flag"], data["tags"], data["settings"]) == (False, [], {})


def test_field_names_are_the_output_names_without_load_only_fields():
    assert field_names(Outer) == (
        "id", "shown", "price", "count", "flag", "created_at", "tags", "maybe_tags",
        "inner", "inners", "stored", "settings", "maybe",
    )  # fmt: skip
    assert field_names(Outer()) == field_names(Outer)


def test_given_values_take_the_row_s_place_and_are_converted():
    serialize = compile_serializer(Outer)
    data = serialize(ROW, inners=[{"name": "c", "at": 1000}], count=7)
    assert data["inners"] == [{"name": "c", "at": "1970-01-01T00:00:01.000Z"}]
    assert data["count"] == 7
    assert list(data) == list(field_names(Outer))
    with pytest.raises(TypeError):
        serialize(ROW, nope=1)


def test_a_special_converter_is_named_at_compile_time():
    serialize = compile_serializer(Outer, convert={"count": lambda value: value * 2})
    assert serialize(ROW)["count"] == 6
    with pytest.raises(ValueError):
        compile_serializer(Outer, convert={"nope": str})


def test_a_model_is_read_through_its_stored_values():
    class Shape(ma.Schema):
        sku = ma.fields.String()
        cost_price = ma.fields.Float(allow_none=True)
        created_at = ma.fields.DateTime()

    product = Product(sku="MUG-1", cost_price=Decimal("2.50"), created_at=0)
    assert compile_serializer(Shape)(product) == {
        "sku": "MUG-1",
        "cost_price": 2.5,
        "created_at": "1970-01-01T00:00:00.000Z",
    }


# The resources: each serializer is made from its documented schema ---------------------


def _package_modules():
    import importlib
    import pkgutil

    import commerce_api

    for info in pkgutil.walk_packages(commerce_api.__path__, "commerce_api."):
        if ".migrations." in info.name:
            continue
        yield importlib.import_module(info.name)


def _compiled(value):
    return callable(value) and isinstance(getattr(value, "schema", None), type)


# serializers whose compiled part is followed by fields shown only in some states
STATE_DEPENDENT = {"commerce_api.jobs.store.serialize_job"}  # by status (DESIGN 8)


def test_every_serializer_of_a_resource_is_compiled_from_its_schema():
    """A ``serialize_*`` is a compiled schema, or a small function that hands its row to
    one (with the values the row does not hold): none writes the shape out by hand."""
    seen = {}
    for module in _package_modules():
        for name, value in vars(module).items():
            if name.startswith("serialize_") and callable(value):
                where = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
                seen.setdefault(id(value), (where, value))
    assert len(seen) >= 15
    for where, value in seen.values():
        if _compiled(value):
            continue
        used = [
            value.__globals__[n]
            for n in value.__code__.co_names
            if _compiled(value.__globals__.get(n))
        ]
        assert used, f"{where} builds its dict by hand"
        if where not in STATE_DEPENDENT:
            assert "format_ms" not in value.__code__.co_names, where


def test_the_fields_names_are_the_schema_s():
    from commerce_api.auth.schemas import KEY_FIELDS
    from commerce_api.auth.shapes import ApiKeySchema
    from commerce_api.events.feed import EVENT_FIELDS
    from commerce_api.events.shapes import EventSchema
    from commerce_api.inventory import services as inventory
    from commerce_api.inventory import shapes as inventory_shapes
    from commerce_api.jobs.shapes import JobSchema
    from commerce_api.jobs.store import JOB_FIELDS
    from commerce_api.marketplaces import services as marketplaces
    from commerce_api.marketplaces import shapes as marketplace_shapes
    from commerce_api.orders import reading
    from commerce_api.orders import shapes as order_shapes
    from commerce_api.pricing.recommendations import RECOMMENDATION_FIELDS
    from commerce_api.pricing.rules import RULE_FIELDS
    from commerce_api.pricing.schemas import COMPETITOR_FIELDS
    from commerce_api.pricing.shapes import CompetitorPriceSchema, RecommendationSchema, RuleSchema
    from commerce_api.products import schemas as product_schemas
    from commerce_api.products import shapes as product_shapes
    from commerce_api.products.services import PRODUCT_FIELDS
    from commerce_api.webhooks.deliveries import DELIVERY_FIELDS
    from commerce_api.webhooks.endpoints import ENDPOINT_FIELDS
    from commerce_api.webhooks.schemas import DETAIL_DELIVERY_FIELDS
    from commerce_api.webhooks.shapes import DeliveryDetailSchema, DeliverySchema, WebhookSchema

    pairs = [
        (KEY_FIELDS, ApiKeySchema),
        (EVENT_FIELDS, EventSchema),
        (inventory.RECORD_FIELDS, inventory_shapes.InventoryRecordSchema),
        (inventory.WAREHOUSE_FIELDS, inventory_shapes.WarehouseSchema),
        (inventory.ADJUSTMENT_FIELDS, inventory_shapes.AdjustmentSchema),
        (JOB_FIELDS, JobSchema),
        (marketplaces.CONNECTION_FIELDS, marketplace_shapes.ConnectionSchema),
        (marketplaces.ATTEMPT_FIELDS, marketplace_shapes.SyncAttemptSchema),
        (reading.ORDER_FIELDS, order_shapes.OrderSchema),
        (reading.DETAIL_FIELDS, order_shapes.OrderDetailSchema),
        (RECOMMENDATION_FIELDS, RecommendationSchema),
        (RULE_FIELDS, RuleSchema),
        (COMPETITOR_FIELDS, CompetitorPriceSchema),
        (PRODUCT_FIELDS, product_shapes.ProductSchema),
        (product_schemas.DETAIL_FIELDS, product_shapes.ProductDetailSchema),
        (DELIVERY_FIELDS, DeliverySchema),
        (DETAIL_DELIVERY_FIELDS, DeliveryDetailSchema),
        (ENDPOINT_FIELDS, WebhookSchema),
    ]
    for names, schema in pairs:
        assert names == field_names(schema), schema


# compile_shape: a JSON result (a job's) as its documented schema shows it --------------


class Marked(ma.Schema):
    name = ma.fields.String(required=True)
    error = ma.fields.Nested(Inner)  # optional: the schema marks its required fields
    maybe = ma.fields.Integer(allow_none=True)


class Whole(ma.Schema):
    count = ma.fields.Integer()
    ratio = ma.fields.Float(allow_none=True)
    items = ma.fields.List(ma.fields.Nested(Marked))
    tags = ma.fields.List(ma.fields.String())
    extra = ma.fields.Dict()
    flag = ma.fields.Boolean()


def test_documented_required_follows_the_document_s_rule():
    assert documented_required(Marked) == {"name"}
    assert documented_required(Whole) == set(Whole().fields)


def test_a_shape_fills_required_containers_and_leaves_optional_fields_out():
    shape = compile_shape(Whole)
    data = {"count": 2, "flag": 1, "items": [{"name": "a"}, {"name": "b", "maybe": None}], "x": 1}
    assert shape(data) == {
        "count": 2,
        "ratio": None,
        "items": [{"name": "a"}, {"name": "b", "maybe": None}],
        "tags": [],
        "extra": {},
        "flag": True,
    }
    assert shape({**data, "ratio": Decimal("0.5")})["ratio"] == 0.5


def test_a_shape_refuses_a_missing_required_value_and_says_where():
    shape = compile_shape(Whole)
    with pytest.raises(ShapeError) as raised:
        shape({"flag": True, "items": []})
    assert raised.value.path == "result.count"
    with pytest.raises(ShapeError) as raised:
        shape({"count": 1, "flag": True, "items": [{"name": "a"}, {"error": None}]})
    assert raised.value.path == "result.items[1].name"
    with pytest.raises(ShapeError):
        shape({"count": 1, "flag": None})  # a boolean that is never null
    with pytest.raises(ShapeError):
        shape(["not", "an", "object"])
