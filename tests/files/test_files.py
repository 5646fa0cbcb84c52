"""Imports and exports through HTTP: what a merchant with a spreadsheet sees."""

import csv
import io

import pytest

from commerce_api.events.models import Event
from commerce_api.files.csvio import cell_text, iter_records, neutralise, restore
from commerce_api.inventory.models import Adjustment
from commerce_api.jobs.models import Job
from commerce_api.products.models import Product
from commerce_api.products.services import PRODUCT_FIELDS
from tests.support.factories import auth_headers, create_product, make_key, make_tenant
from tests.support.jobs_support import jobs_app, run_worker  # noqa: F401

__all__ = ["jobs_app"]


def upload(client, headers, kind, text, dry_run=None, status=202, filename="file.csv", **extra):
    data = {
        "type": kind,
        "file": (io.BytesIO(text.encode() if isinstance(text, str) else text), filename),
    }
    if dry_run is not None:
        data["dry_run"] = "true" if dry_run else "false"
    data.update(extra)
    answer = client.post(
        "/api/imports", headers=headers, data=data, content_type="multipart/form-data"
    )
    assert answer.status_code == status, answer.get_json()
    return answer.get_json()


def run_import(client, app, headers, kind, text, dry_run=None):
    summary = upload(client, headers, kind, text, dry_run)["data"]
    run_worker(app)
    job = client.get(f"/api/ai-jobs/{summary['job_id']}", headers=headers).get_json()["data"]
    assert job["status"] == "completed", job
    assert job["progress"] == {"done": summary["rows"], "total": summary["rows"]}
    return job["result"]


def export(client, headers, name, query=""):
    answer = client.get(f"/api/exports/{name}.csv{query}", headers=headers)
    assert answer.status_code == 200, answer.get_data(as_text=True)[:500]
    assert answer.mimetype == "text/csv"
    return answer.get_data(as_text=True)


def rows_of(text):
    return list(csv.DictReader(io.StringIO(text)))


PRODUCTS = (
    "sku,title,description,status,gtin,category,cost_price,weight_kg,images\n"
    "MUG-1,Enamel mug,A mug.,active,4006381333931,kitchen,3.50,0.35,https://img.example.com/a.jpg\n"
    "MUG-2,Tin mug,,draft,,kitchen,2,,\n"
)


def test_a_products_file_creates_then_changes_nothing_the_second_time(jobs_app, client, headers):
    result = run_import(client, jobs_app, headers, "products", PRODUCTS)
    assert (result["created"], result["updated"], result["unchanged"], result["failed"]) == (
        2,
        0,
        0,
        0,
    )
    mug = client.get("/api/products/MUG-1", headers=headers).get_json()["data"]
    assert mug["cost_price"] == 3.5 and mug["images"] == ["https://img.example.com/a.jpg"]
    assert (
        client.get("/api/products/MUG-2", headers=headers).get_json()["data"]["description"] is None
    )
    events = Event.select().count()
    again = run_import(client, jobs_app, headers, "products", PRODUCTS)
    assert (again["created"], again["updated"], again["unchanged"]) == (0, 0, 2)
    assert Event.select().count() == events  # nothing changed, nothing announced
    changed = PRODUCTS.replace("Tin mug", "Steel mug")
    third = run_import(client, jobs_app, headers, "products", changed)
    assert (third["updated"], third["unchanged"]) == (1, 1)


@pytest.mark.parametrize(
    ("bom", "sep", "eol"),
    [
        ("\ufeff", ",", "\n"),  # a byte-order mark
        ("", ";", "\n"),  # semicolons
        ("", ",", "\r\n"),  # Windows line ends
        ("\ufeff", ";", "\r\n"),
        ("", "\t", "\r\n"),
    ],
)
def test_what_spreadsheets_write_is_read(jobs_app, client, headers, bom, sep, eol):
    records = [
        ["sku", "title", "description"],
        ["A-1", '"Mug, blue"', '"Two\nlines"'],
        ["A-2", "Cup", ""],
    ]
    text = bom + "".join(sep.join(record) + eol for record in records)
    result = run_import(client, jobs_app, headers, "products", text)
    assert result["created"] == 2, result
    body = client.get("/api/products/A-1", headers=headers).get_json()["data"]
    assert body["title"] == "Mug, blue"
    assert body["description"] == "Two\nlines"


def test_bad_rows_are_reported_per_row_and_the_rest_applied(jobs_app, client, headers):
    text = (
        "sku,title,gtin,cost_price\n"
        "OK-1,Fine,,1\n"
        "BAD-GTIN,Bad gtin,4006381333932,1\n"
        "NEG,Negative,,-5\n"
        "NOTNUM,Not a number,,abc\n"
        "DUP,First,,1\n"
        "DUP,Second,,1\n"
        ",No sku,,1\n"
        "SHORT,only two\n"
    )
    result = run_import(client, jobs_app, headers, "products", text)
    by_row = {error["row"]: error for error in result["errors"]}
    assert result["created"] == 1 and result["failed"] == 7
    assert by_row[3]["code"] == "INVALID_GTIN"
    assert by_row[4] == {
        "row": 4,
        "column": "cost_price",
        "code": "VALIDATION_ERROR",
        "message": by_row[4]["message"],
    }
    assert by_row[5]["column"] == "cost_price"
    assert by_row[6]["code"] == by_row[7]["code"] == "DUPLICATE_ROW"  # neither is guessed
    assert by_row[8]["column"] == "sku"
    assert by_row[9]["code"] == "CSV_ROW_LENGTH"
    assert [p.sku for p in Product.select()] == ["OK-1"]


def test_a_dry_run_reports_and_changes_nothing(jobs_app, client, headers):
    events = Event.select().count()
    result = run_import(client, jobs_app, headers, "products", PRODUCTS + "X,,,,,,,,\n", True)
    assert result["dry_run"] is True
    assert (result["created"], result["failed"]) == (2, 1)
    assert Product.select().count() == 0
    assert Event.select().count() == events


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("sku,title,colour\nA,B,red\n", "CSV_UNKNOWN_COLUMN"),
        ("title\nB\n", "CSV_MISSING_COLUMN"),
        ("sku,title,title\nA,B,C\n", "CSV_DUPLICATE_COLUMN"),
        ("", "CSV_EMPTY"),
        (b"sku,title\nA,\xff\xfe\n", "CSV_INVALID"),
    ],
)
def test_a_file_that_cannot_be_imported_is_refused_at_once(app, client, headers, text, code):
    jobs = Job.select().count()
    body = upload(client, headers, "products", text, status=422)
    assert body["error"]["code"] == code
    assert Job.select().count() == jobs  # nothing queued, nothing kept


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"type": "customers"}, "type"),
        ({"dry_run": "maybe"}, "dry_run"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_form_fields_are_refused(app, client, headers, data, field):
    form = {"type": "products", "file": (io.BytesIO(b"sku,title\nA,B\n"), "f.csv"), **data}
    answer = client.post("/api/imports", headers=headers, data=form)
    assert answer.status_code == 422
    assert field in answer.get_json()["error"]["details"]["fields"]


def test_an_import_needs_a_multipart_body_and_the_scope_of_what_it_writes(app, client, tenant):
    _, secret = make_key(tenant, ["inventory:write", "ai-jobs:read"])
    headers = auth_headers(tenant, secret)
    answer = client.post("/api/imports", headers=headers, json={"type": "products"})
    assert answer.status_code == 415
    body = upload(client, headers, "products", PRODUCTS, status=403)
    assert body["error"]["code"] == "INSUFFICIENT_SCOPE"


def test_a_file_over_50_mb_is_refused_at_once(app, client, headers):
    answer = client.post(
        "/api/imports",
        headers={**headers, "Content-Type": "multipart/form-data; boundary=x"},
        data=b"",
        environ_overrides={"CONTENT_LENGTH": str(50 * 1024 * 1024 + 1)},
    )
    assert answer.status_code == 413
    assert answer.get_json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


def _warehouse(client, headers, name):
    answer = client.post("/api/inventory/warehouses", headers=headers, json={"name": name})
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()["data"]["id"]


def test_stock_levels_from_a_file_go_through_the_ledger_once(jobs_app, client, headers):
    create_product(client, headers, sku="S-1")
    create_product(client, headers, sku="S-2")
    main = _warehouse(client, headers, "Main")
    text = (
        "sku,warehouse_id,quantity,reason,note,safety_stock\n"
        f"S-1,{main},10,supplier_receipt,PO 17,2\n"
        f"S-2,{main},4,,,\n"
        f"S-3,{main},4,,,\n"
        f"S-1,wh_nope,4,,,\n"
    )
    result = run_import(client, jobs_app, headers, "inventory", text)
    assert (result["updated"], result["failed"]) == (2, 2), result
    codes = {error["row"]: (error["column"], error["code"]) for error in result["errors"]}
    assert codes == {4: ("sku", "PRODUCT_NOT_FOUND"), 5: ("warehouse_id", "WAREHOUSE_NOT_FOUND")}
    record = client.get("/api/inventory/S-1", headers=headers).get_json()["data"]
    assert record["total_on_hand"] == 10 and record["safety_stock"] == 2
    ledger = Adjustment.select().count()
    again = run_import(client, jobs_app, headers, "inventory", text)
    assert (again["updated"], again["unchanged"], again["failed"]) == (0, 2, 2)
    assert Adjustment.select().count() == ledger  # the same levels: no ledger rows
    twice = text + f"S-2,{main},5,,,\n"
    result = run_import(client, jobs_app, headers, "inventory", twice)
    assert [e["code"] for e in result["errors"] if e["row"] in (3, 6)] == ["DUPLICATE_ROW"] * 2
    assert (
        client.get("/api/inventory/S-2", headers=headers).get_json()["data"]["total_on_hand"] == 4
    )


def test_below_reserved_is_a_row_error(jobs_app, client, headers):
    create_product(client, headers, sku="R-1")
    main = _warehouse(client, headers, "Main")
    text = f"sku,warehouse_id,quantity\nR-1,{main},-1\n"
    result = run_import(client, jobs_app, headers, "inventory", text)
    assert result["errors"][0]["column"] == "quantity" and result["failed"] == 1


def test_rows_of_a_bundle_are_refused_as_the_api_refuses_them(jobs_app, client, headers):
    """A bundle's stock is derived (DESIGN 14): a level or a safety stock for it is that
    row's BUNDLE_STOCK_IS_DERIVED, as PUT /api/inventory/:sku answers, even a level equal
    to the empty row the product kept from before it became a bundle; the others apply."""
    main = _warehouse(client, headers, "Main")
    for sku in ("C-1", "WAS-1"):
        create_product(client, headers, sku=sku)
    put = {"warehouse_id": main, "quantity": 5, "reason": "cycle_count"}
    assert client.put("/api/inventory/WAS-1", json=put, headers=headers).status_code == 200
    put["quantity"] = 0
    assert client.put("/api/inventory/WAS-1", json=put, headers=headers).status_code == 200
    for sku in ("SET-1", "WAS-1"):
        body = {"components": [{"sku": "C-1", "quantity": 2}]}
        if sku == "SET-1":
            answer = client.post("/api/products", json={"sku": sku, "title": "Set", **body},
                                 headers=headers)  # fmt: skip
        else:
            answer = client.patch(f"/api/products/{sku}", json=body, headers=headers)
        assert answer.status_code in (200, 201), answer.get_json()
    api = client.put("/api/inventory/SET-1", json={**put, "quantity": 4}, headers=headers)
    assert api.status_code == 409
    assert api.get_json()["error"]["code"] == "BUNDLE_STOCK_IS_DERIVED"
    ledger = Adjustment.select().count()
    text = (
        "sku,warehouse_id,quantity,safety_stock\n"
        f"C-1,{main},8,\n"
        f"SET-1,{main},4,\n"
        f"WAS-1,{main},0,3\n"
    )
    result = run_import(client, jobs_app, headers, "inventory", text)
    assert (result["updated"], result["failed"]) == (1, 2), result
    codes = {error["row"]: (error["column"], error["code"]) for error in result["errors"]}
    assert codes == {n: ("sku", "BUNDLE_STOCK_IS_DERIVED") for n in (3, 4)}
    assert Adjustment.select().count() == ledger + 1  # C-1 only
    record = client.get("/api/inventory/SET-1", headers=headers).get_json()["data"]
    assert (record["total_available"], record["safety_stock"]) == (4, 0)  # 8 // 2, derived
    record = client.get("/api/inventory/WAS-1", headers=headers).get_json()["data"]
    assert (record["total_available"], record["safety_stock"]) == (4, 0)


def test_listings_from_a_file(jobs_app, client, headers):
    create_product(client, headers, sku="L-1")
    text = "sku,marketplace,price,stock_buffer\nL-1,amazon,12.5,1\nL-1,ebay,3,0\n"
    result = run_import(client, jobs_app, headers, "listings", text)
    assert result["failed"] == 2  # no listing on either yet
    assert {e["code"] for e in result["errors"]} == {"LISTING_NOT_FOUND"}


# Exports ----------------------------------------------------------------------------------


def test_exports_have_the_api_field_names_and_neutralised_cells(app, client, headers):
    create_product(client, headers, sku="E-1", title='=HYPERLINK("http://evil")')
    create_product(client, headers, sku="E-2", title="@SUM(A1)", description="-2+3")
    text = export(client, headers, "products")
    rows = rows_of(text)
    assert tuple(rows[0]) == PRODUCT_FIELDS  # the list's own fields, in its order
    titles = {row["sku"]: row["title"] for row in rows}
    assert titles == {"E-1": '\'=HYPERLINK("http://evil")', "E-2": "'@SUM(A1)"}
    assert {row["sku"]: row["description"] for row in rows}["E-2"] == "'-2+3"
    assert rows[0]["cost_price"] == "3.5"  # numbers stay numbers


def test_exports_take_the_list_filters_and_refuse_bad_ones(app, client, headers):
    create_product(client, headers, sku="F-1", category="mugs")
    create_product(client, headers, sku="F-2", category="cups")
    assert [r["sku"] for r in rows_of(export(client, headers, "products", "?category=mugs"))] == [
        "F-1"
    ]
    answer = client.get("/api/exports/products.csv?status=nope", headers=headers)
    assert answer.status_code == 422
    answer = client.get("/api/exports/products.csv?limit=5", headers=headers)
    assert answer.status_code == 422  # pages are not an export's


def test_an_export_needs_the_read_scope(app, client, tenant):
    _, secret = make_key(tenant, ["products:read"])
    headers = auth_headers(tenant, secret)
    assert client.get("/api/exports/products.csv", headers=headers).status_code == 200
    answer = client.get("/api/exports/orders.csv", headers=headers)
    assert answer.status_code == 403


def test_a_tenant_exports_only_its_own(app, client, headers):
    create_product(client, headers, sku="MINE")
    other = make_tenant()
    _, secret = make_key(other)
    assert rows_of(export(client, auth_headers(other, secret), "products")) == []


def test_round_trip_export_import_export(jobs_app, client, headers):
    for n in range(7):
        create_product(client, headers, sku=f"RT-{n}", title=f'=Mug {n}, "big"', category="mugs")
    main = _warehouse(client, headers, "Main")
    for n in range(7):
        answer = client.put(
            f"/api/inventory/RT-{n}",
            headers=headers,
            json={"warehouse_id": main, "quantity": n + 1, "reason": "cycle_count"},
        )
        assert answer.status_code == 200
    products, stock = export(client, headers, "products"), export(client, headers, "inventory")
    other = make_tenant()
    _, secret = make_key(other)
    theirs = auth_headers(other, secret)
    _warehouse(client, theirs, "Main")
    assert run_import(client, jobs_app, theirs, "products", products)["created"] == 7
    assert run_import(client, jobs_app, theirs, "inventory", stock)["updated"] == 7
    again_products = export(client, theirs, "products")
    again_stock = export(client, theirs, "inventory")
    generated = {"id", "created_at", "updated_at", "product_id", "warehouses.warehouse_id"}

    def comparable(text):
        return [{k: v for k, v in row.items() if k not in generated} for row in rows_of(text)]

    assert sorted(comparable(again_products), key=str) == sorted(comparable(products), key=str)
    assert sorted(comparable(again_stock), key=str) == sorted(comparable(stock), key=str)


def test_cells_round_trip():
    for text in ("=1+1", "'=x", "''", "'Twas", "-5", "plain", "@a", "\tx", ""):
        assert restore(neutralise(text)) == text
    assert cell_text(-5) == "-5" and cell_text(2.0) == "2" and cell_text(0.1) == "0.1"
    records = list(iter_records([b'a;b\r\n1;"x', b'\r\ny"\r\n']))
    assert records == [["a", "b"], ["1", "x\r\ny"]]


# The command line -------------------------------------------------------------------------


def test_the_cli_imports_and_exports(app, runner, client, headers, tenant, tmp_path):
    from commerce_api.cli import cli

    path = tmp_path / "products.csv"
    path.write_text(PRODUCTS)
    result = runner.invoke(cli, ["import", "--tenant", tenant.id, "--type", "products", str(path)])
    assert result.exit_code == 0, result.output
    assert "2 rows: 2 created, 0 updated, 0 unchanged, 0 failed" in result.output
    result = runner.invoke(
        cli, ["import", "--tenant", tenant.id, "--type", "products", "--json", str(path)]
    )
    assert result.exit_code == 0 and '"unchanged": 2' in result.output
    out = tmp_path / "out.csv"
    result = runner.invoke(
        cli,
        ["export", "products", "--tenant", tenant.id, "-o", str(out), "--filter", "status=active"],
    )
    assert result.exit_code == 0, result.output
    assert [row["sku"] for row in rows_of(out.read_text())] == ["MUG-1"]
    assert out.read_bytes().decode() == export(client, headers, "products", "?status=active")


def test_the_cli_says_what_is_wrong(app, runner, tenant, tmp_path):
    from commerce_api.cli import cli

    bad = tmp_path / "bad.csv"
    bad.write_text("sku,colour\nA,red\n")
    result = runner.invoke(cli, ["import", "--tenant", tenant.id, "--type", "products", str(bad)])
    assert result.exit_code == 1 and "CSV_UNKNOWN_COLUMN" in result.output
    rows = tmp_path / "rows.csv"
    rows.write_text("sku,title\nA,\n")
    result = runner.invoke(cli, ["import", "--tenant", tenant.id, "--type", "products", str(rows)])
    assert result.exit_code == 1 and "row 2 title: VALIDATION_ERROR" in result.output
    result = runner.invoke(cli, ["export", "products", "--tenant", tenant.id, "--filter", "x"])
    assert result.exit_code == 1 and "NAME=VALUE" in result.output
    result = runner.invoke(
        cli, ["export", "products", "--tenant", tenant.id, "--filter", "status=nope"]
    )
    assert result.exit_code == 1 and "VALIDATION_ERROR" in result.output
    assert "Traceback" not in result.output


def test_an_upload_with_an_idempotency_key_is_queued_once(jobs_app, client, headers):
    def send(boundary_file_name="products.csv"):
        data = {"type": "products", "file": (io.BytesIO(PRODUCTS.encode()), boundary_file_name)}
        return client.post(
            "/api/imports",
            headers={**headers, "Idempotency-Key": "import-1"},
            data=data,
            content_type="multipart/form-data",
        )

    first, again = send(), send()  # a new multipart boundary each time: the same request
    assert first.status_code == again.status_code == 202
    assert again.get_json() == first.get_json()
    assert Job.select().count() == 1
    other = send("other.csv")
    assert other.status_code == 422
    assert other.get_json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"


def test_a_form_that_is_not_one_is_refused_not_failed(app, client, headers):
    answer = client.post(
        "/api/imports",
        headers={
            **headers,
            "Content-Type": "multipart/form-data; boundary=b",
            "Idempotency-Key": "k",
        },
        data=b'--b\r\nContent-Disposition: form-data; name="\xc3\xb7\'\\"\r\n\r\nx\r\n'
        b'--b\r\nContent-Disposition: form-data; name=""\r\n\r\n{}\r\n'
        b'--b\r\nContent-Disposition: form-data; name="file"\r\n\r\n0m\x0c\r\n'
        b'--b\r\nContent-Disposition: form-data; name="type"\r\n\r\nlistings\r\n--b--\r\n',
    )
    assert answer.status_code == 422, answer.get_json()


def test_a_filter_the_list_refuses_is_refused_before_the_file_starts(app, client, headers):
    # once a stream has begun its status line is sent: the refusal must come first
    answer = client.get("/api/exports/inventory.csv?warehouse_id=wh_nope", headers=headers)
    assert answer.status_code == 404
    assert answer.get_json()["error"]["code"] == "WAREHOUSE_NOT_FOUND"
    answer = client.get("/api/exports/adjustments.csv?warehouse_id=wh_nope", headers=headers)
    assert answer.status_code == 404
