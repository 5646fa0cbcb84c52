"""Allocation per listing and bundle availability (DESIGN 14) against a straightforward
reference model (hypothesis), and the listing PATCH's allocation fields over HTTP."""

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from commerce_api.inventory.models import Stock
from commerce_api.inventory.reservations import reserve_stock, set_marketplace_stock
from commerce_api.inventory.services import create_warehouse, set_stock
from commerce_api.marketplaces.allocation import Allocation, allocate, desired_quantities
from commerce_api.products.bundles import Component, bundle_available
from commerce_api.products.models import Listing
from commerce_api.products.services import archive_product, create_product
from tests.support.factories import headers_for, make_tenant

PROPERTIES = settings(max_examples=200, deadline=None, derandomize=True, database=None)
# one new tenant per example: the app fixture's database is shared by the examples
DB_PROPERTIES = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=(Phase.explicit, Phase.generate),  # shrinking database examples takes minutes
)


# -- the reference model: DESIGN 14 read literally --------------------------------------------


def reference_quantity(available, rule):
    """fixed, or else min(max, floor(available x pct / 100) - buffer), never below 0."""
    if rule["fixed_quantity"] is not None:
        return rule["fixed_quantity"]
    share = Fraction(available * rule["allocation_pct"], 100)
    quantity = int(share // 1) - rule["stock_buffer"]
    if rule["max_quantity"] is not None and rule["max_quantity"] < quantity:
        quantity = rule["max_quantity"]
    return quantity if quantity > 0 else 0


def reference_bundle(components, available):
    """The minimum over components of floor(available / quantity); 0 if one is archived."""
    if any(archived for _, _, archived in components):
        return 0
    return min(available.get(pid, 0) // quantity for pid, quantity, _ in components)


rules = st.fixed_dictionaries(
    {
        "stock_buffer": st.integers(0, 20),
        "max_quantity": st.none() | st.integers(0, 60),
        "allocation_pct": st.integers(1, 100),
        "fixed_quantity": st.none() | st.integers(0, 60),
    }
).map(lambda r: {**r, "fixed_quantity": None} if r["max_quantity"] is not None else r)


def to_allocation(rule, warehouse_ids=None):
    return Allocation(
        stock_buffer=rule["stock_buffer"],
        max_quantity=rule["max_quantity"],
        allocation_pct=rule["allocation_pct"],
        fixed_quantity=rule["fixed_quantity"],
        warehouse_ids=warehouse_ids,
    )


@PROPERTIES
@given(available=st.integers(0, 10_000), rule=rules)
def test_the_formula_matches_the_reference(available, rule):
    assert allocate(available, to_allocation(rule)) == reference_quantity(available, rule)


@PROPERTIES
@given(available=st.integers(0, 10_000), rule=rules, more=st.integers(0, 100))
def test_more_stock_never_offers_less(available, rule, more):
    rule = to_allocation(rule)
    assert allocate(available + more, rule) >= allocate(available, rule) >= 0


@PROPERTIES
@given(
    parts=st.lists(
        st.tuples(st.integers(1, 5), st.integers(0, 40), st.booleans()), min_size=1, max_size=4
    )
)
def test_bundle_availability_matches_the_reference(parts):
    components = [
        Component(f"p{i}", f"S{i}", q, archived) for i, (q, _, archived) in enumerate(parts)
    ]
    available = {f"p{i}": a for i, (_, a, _) in enumerate(parts)}
    expected = reference_bundle(
        [(f"p{i}", q, archived) for i, (q, _, archived) in enumerate(parts)], available
    )
    assert bundle_available(components, available) == expected


# -- random catalogues in the database ---------------------------------------------------------

catalogues = st.fixed_dictionaries(
    {
        "products": st.integers(1, 4),
        "warehouses": st.integers(1, 3),
        "fba": st.booleans(),
        "stock": st.lists(
            st.tuples(st.integers(0, 40), st.integers(0, 15)), min_size=12, max_size=12
        ),
        "bundles": st.lists(
            st.lists(st.tuples(st.integers(0, 3), st.integers(1, 4)), min_size=1, max_size=3),
            max_size=2,
        ),
        "archive": st.none() | st.integers(0, 3),
        "listings": st.lists(
            st.tuples(st.integers(0, 5), rules, st.none() | st.sets(st.integers(0, 2), min_size=1)),
            min_size=1,
            max_size=6,
        ),
    }
)


@pytest.mark.slow
@DB_PROPERTIES
@given(catalogue=catalogues)
def test_desired_quantities_match_the_reference_on_random_catalogues(app, catalogue):
    tenant = make_tenant()
    products = []
    for n in range(catalogue["products"]):
        products.append(create_product(tenant.id, {"sku": f"P{n}", "title": "x"})["id"])
    own = [
        create_warehouse(tenant.id, {"name": f"W{n}"})["id"] for n in range(catalogue["warehouses"])
    ]
    fba = None
    if catalogue["fba"]:
        fba = create_warehouse(
            tenant.id, {"name": "FBA", "type": "FBA", "marketplace": "amazon_de"}
        )["id"]
    cells = iter(catalogue["stock"])
    for n, _ in enumerate(products):
        for warehouse_id in own:
            on_hand, _ = next(cells)
            if on_hand:
                set_stock(
                    tenant.id,
                    f"P{n}",
                    {"warehouse_id": warehouse_id, "quantity": on_hand, "reason": "cycle_count"},
                    "test",
                )
        reserve = catalogue["stock"][n][1]
        total = sum(s.on_hand for s in Stock.select().where(Stock.product == products[n]))
        if 0 < reserve <= total:
            reserve_stock(tenant.id, f"P{n}", reserve, reference=f"ref-{n}", created_by="t")
    bundles = {}
    for b, parts in enumerate(catalogue["bundles"]):
        chosen = {}
        for index, quantity in parts:
            if index < len(products):
                chosen[f"P{index}"] = quantity
        if not chosen:
            continue
        body = {
            "sku": f"B{b}",
            "title": "bundle",
            "components": [{"sku": s, "quantity": q} for s, q in chosen.items()],
        }
        bundle_id = create_product(tenant.id, body)["id"]
        bundles[bundle_id] = [(products[int(s[1:])], q) for s, q in chosen.items()]
        products.append(bundle_id)
    if fba is not None:  # after the bundles: a component stocked only there is refused
        for n in range(catalogue["products"]):
            set_marketplace_stock(tenant.id, fba, f"P{n}", 7, created_by="t")
    archived = set()
    if catalogue["archive"] is not None and catalogue["archive"] < catalogue["products"]:
        archive_product(tenant.id, f"P{catalogue['archive']}")
        archived.add(products[catalogue["archive"]])

    # the reference reads the stock rows plainly and applies DESIGN 14 by hand
    stock = {}
    for row in Stock.select().where(Stock.tenant == tenant.id):
        if row.warehouse_id in own:
            stock[(row.product_id, row.warehouse_id)] = row.on_hand - row.reserved
    items, expected = [], {}
    for key, (index, rule, chosen) in enumerate(catalogue["listings"]):
        product_id = products[index % len(products)]
        feeding = None if chosen is None else tuple(own[i] for i in chosen if i < len(own))
        feeding = feeding or None
        pool = own if feeding is None else list(feeding)

        def available_of(pid, pool=pool):
            return sum(stock.get((pid, w), 0) for w in pool)

        if product_id in bundles:
            parts = [(pid, q, pid in archived) for pid, q in bundles[product_id]]
            available = reference_bundle(parts, {pid: available_of(pid) for pid, _, _ in parts})
        else:
            available = available_of(product_id)
        expected[str(key)] = reference_quantity(available, rule)
        items.append((str(key), product_id, to_allocation(rule, feeding)))
    assert desired_quantities(items) == expected


# -- the listing PATCH ------------------------------------------------------------------------


@pytest.fixture
def listed(client, headers, tenant):
    response = client.post("/api/products", json={"sku": "MUG-1", "title": "Mug"}, headers=headers)
    assert response.status_code == 201
    product_id = response.get_json()["data"]["id"]
    main = create_warehouse(tenant.id, {"name": "Main"})["id"]
    spare = create_warehouse(tenant.id, {"name": "Spare"})["id"]
    Listing.create(
        id="listing_1",
        tenant=tenant.id,
        product=product_id,
        marketplace="ebay",
        external_id="E-1",
        price=Decimal("10.00"),  # a listing without a price is held, not pending
        quantity=0,
    )
    return {"main": main, "spare": spare}


def listing_row():
    row = Listing.get_by_id("listing_1")
    return (
        row.version,
        row.sync_status,
        row.stock_buffer,
        row.max_quantity,
        row.allocation_pct,
        row.fixed_quantity,
        row.warehouse_ids,
    )


def patch(client, headers, body, marketplace="ebay"):
    return client.patch(f"/api/products/MUG-1/listings/{marketplace}", json=body, headers=headers)


def test_allocation_fields_are_set_shown_and_mark_the_listing_pending(client, headers, listed):
    body = {
        "max_quantity": 20,
        "allocation_pct": 60,
        "warehouse_ids": [listed["spare"], listed["main"], listed["main"]],
    }
    response = patch(client, headers, body)
    assert response.status_code == 200, response.get_json()
    data = response.get_json()["data"]
    assert data["max_quantity"] == 20 and data["allocation_pct"] == 60
    assert data["warehouse_ids"] == sorted([listed["main"], listed["spare"]])
    assert data["fixed_quantity"] is None and data["sync_status"] == "pending"
    version = listing_row()[0]
    shown = client.get("/api/products/MUG-1", headers=headers).get_json()["data"]["listings"][0]
    assert shown["warehouse_ids"] == data["warehouse_ids"]
    # the same values again change nothing
    assert patch(client, headers, body).status_code == 200
    assert listing_row()[0] == version
    # switching from a cap to a fixed quantity: the cap is cleared in the same request
    response = patch(client, headers, {"fixed_quantity": 5, "max_quantity": None})
    assert response.status_code == 200
    assert listing_row()[3:6] == (None, 60, 5)
    response = patch(client, headers, {"warehouse_ids": None})
    assert response.get_json()["data"]["warehouse_ids"] is None


@pytest.mark.parametrize(
    "body,status,code",
    [
        ({"allocation_pct": 0}, 422, "VALIDATION_ERROR"),
        ({"allocation_pct": 101}, 422, "VALIDATION_ERROR"),
        ({"allocation_pct": None}, 422, "VALIDATION_ERROR"),
        ({"max_quantity": -1}, 422, "VALIDATION_ERROR"),
        ({"fixed_quantity": -2}, 422, "VALIDATION_ERROR"),
        ({"max_quantity": 1.5}, 422, "VALIDATION_ERROR"),
        ({"fixed_quantity": 3, "max_quantity": 10}, 422, "INVALID_ALLOCATION"),
        ({"warehouse_ids": []}, 422, "VALIDATION_ERROR"),
        ({"warehouse_ids": ["wh_nope"]}, 404, "WAREHOUSE_NOT_FOUND"),
    ],
)
def test_bad_allocations_are_refused_and_change_nothing(
    client, headers, listed, body, status, code
):
    before = listing_row()
    response = patch(client, headers, body)
    assert response.status_code == status, response.get_json()
    assert response.get_json()["error"]["code"] == code
    assert listing_row() == before


def test_a_fixed_quantity_on_a_capped_listing_is_refused(client, headers, listed):
    assert patch(client, headers, {"max_quantity": 10}).status_code == 200
    before = listing_row()
    response = patch(client, headers, {"fixed_quantity": 3})
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "INVALID_ALLOCATION"
    assert listing_row() == before


def test_warehouses_of_another_tenant_readonly_or_inactive_are_refused(
    client, headers, tenant, listed
):
    theirs = create_warehouse(make_tenant().id, {"name": "Theirs"})["id"]
    fba = create_warehouse(tenant.id, {"name": "FBA", "type": "FBA", "marketplace": "ebay"})["id"]
    closed = create_warehouse(tenant.id, {"name": "Closed", "is_active": False})["id"]
    before = listing_row()
    for warehouse_id, status, code in (
        (theirs, 404, "WAREHOUSE_NOT_FOUND"),
        (fba, 403, "READONLY_WAREHOUSE"),
        (closed, 409, "WAREHOUSE_INACTIVE"),
    ):
        response = patch(client, headers, {"warehouse_ids": [listed["main"], warehouse_id]})
        assert response.status_code == status, response.get_json()
        assert response.get_json()["error"]["code"] == code
        assert response.get_json()["error"]["details"]["warehouse_id"] == warehouse_id
    assert listing_row() == before


def test_another_tenant_cannot_patch_the_listing(client, listed):
    response = patch(client, headers_for(), {"allocation_pct": 50})
    assert response.status_code == 404


def test_an_empty_warehouse_ids_cell_of_a_listings_file_means_all_warehouses():
    from commerce_api.files.csvio import cell_value
    from commerce_api.products.schemas import ListingUpdateSchema

    fields = ListingUpdateSchema().fields
    assert cell_value(fields["warehouse_ids"], "") is None
    assert cell_value(fields["warehouse_ids"], "wh_1") == ["wh_1"]
