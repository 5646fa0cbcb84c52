"""A client generated from the document (openapi-python-client) works without hand edits.

The client is generated into a temporary directory, imported from there, and drives a flow
against a real server; every object it parses must be the documented model, with nothing
left over in ``additional_properties``.
"""

import importlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from commerce_api.orders.ingest import upsert_order
from tests.support.factories import auth_headers, make_key, make_tenant
from tests.support.jobs_support import run_worker
from tests.support.orders_support import connect, make_own_warehouse, order_body, stock_up
from tests.support.servers import gunicorn_server

GENERATOR = os.path.join(os.path.dirname(sys.executable), "openapi-python-client")
PACKAGE = "commerce_api_client"
# Free-form by design: job params echo what was sent; error details vary by code.
FREE_FORM = {"details", "settings"}
ORDER_LINE = {
    "external_line_item_id": "GEN-L1",
    "sku": "GEN-0",
    "title": "Generated mug",
    "quantity": 1,
    "unit_price": 25.0,
    "line_total": 25.0,
}


def generate(spec, tmp_path):
    if not os.path.exists(GENERATOR) and shutil.which("openapi-python-client") is None:
        pytest.skip("openapi-python-client is not installed (it is in the dev extra)")
    document = tmp_path / "openapi.json"
    document.write_text(json.dumps(spec))
    config = tmp_path / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter needed
    out = tmp_path / "client"
    command = [
        GENERATOR if os.path.exists(GENERATOR) else "openapi-python-client",
        "generate",
        "--path",
        str(document),
        "--output-path",
        str(out),
        "--config",
        str(config),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    return result, out


def test_every_operation_has_a_unique_camel_case_operation_id(spec):
    seen = {}
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            name = operation.get("operationId")
            assert name, f"{method.upper()} {path} has no operationId (openapi_ops.ACTIONS)"
            assert name[0].islower() and name.isalnum(), name
            assert name not in seen, (name, seen.get(name), (method, path))
            seen[name] = (method, path)
            assert operation.get("summary") and operation.get("description"), (method, path)


def test_every_post_declares_idempotency_key(spec):
    for path, item in spec["paths"].items():
        operation = item.get("post")
        if not operation or operation.get("security") == []:
            continue
        refs = [p.get("$ref") for p in operation.get("parameters", [])]
        assert "#/components/parameters/IdempotencyKey" in refs, path
        for status, code in (("400", "INVALID_IDEMPOTENCY_KEY"), ("409", "IDEMPOTENCY_KEY_IN_USE")):
            assert code in operation["responses"][status]["description"], (path, code)
        assert "IDEMPOTENCY_KEY_REUSED" in operation["responses"]["422"]["description"]
        for status, response in operation["responses"].items():
            if "$ref" not in response:  # the shared default response
                assert "Idempotent-Replayed" in response["headers"], (path, status)


def test_the_generator_has_no_warnings(spec, tmp_path):
    result, out = generate(spec, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "Warning" not in output and "warning" not in output, output
    assert (out / PACKAGE / "api" / "orders" / "confirm_order_shipment.py").exists()


def same_keys(raw, dumped, where):
    """The JSON the server sent and the parsed model written back have the same keys."""
    if isinstance(raw, list):
        assert isinstance(dumped, list) and len(dumped) == len(raw), where
        for index, (item, other) in enumerate(zip(raw, dumped, strict=True)):
            same_keys(item, other, f"{where}[{index}]")
    elif isinstance(raw, dict):
        assert isinstance(dumped, dict) and set(raw) == set(dumped), (where, raw, dumped)
        for key, item in raw.items():
            if key not in FREE_FORM:
                same_keys(item, dumped[key], f"{where}.{key}")


def only_models(value, where):
    """No object parsed into a plain dict or with leftovers in additional_properties."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            only_models(item, f"{where}[{index}]")
        return
    assert not isinstance(value, dict), (where, "a plain dict, not a model")
    if not hasattr(value, "__attrs_attrs__"):
        return
    own = [a.name for a in value.__attrs_attrs__ if a.name != "additional_properties"]
    if not own:  # a documented map (typed ``additionalProperties``): its entries are there
        only_models(list(value.additional_properties.values()), where)
        return
    assert getattr(value, "additional_properties", {}) == {}, (where, type(value).__name__)
    for attribute in value.__attrs_attrs__:
        if attribute.name not in FREE_FORM and attribute.name != "additional_properties":
            only_models(getattr(value, attribute.name), f"{where}.{attribute.name}")


def assert_typed(value, raw):
    """``value``, parsed by the generated client from ``raw``, is made of documented models
    that hold every key of the JSON and nothing else."""
    same_keys(raw, value.to_dict(), "response")
    only_models(value, "response")


@pytest.fixture
def generated(spec, tmp_path):
    result, out = generate(spec, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def operation(tag, name):
    return importlib.import_module(f"{PACKAGE}.api.{tag}.{name}")


def call(module, **kwargs):
    response = module.sync_detailed(**kwargs)
    assert 200 <= response.status_code < 300, (response.status_code, response.content)
    assert_typed(response.parsed, json.loads(response.content))
    return response


@pytest.mark.slow
def test_a_flow_through_the_generated_client(app, database_url, generated, client):
    models = importlib.import_module(PACKAGE + ".models")
    tenant = make_tenant()
    _, secret = make_key(tenant)
    headers = auth_headers(tenant, secret)
    warehouse = make_own_warehouse(tenant)
    connect(tenant, "amazon", settings={"initial_orders": 0, "orders_per_pull": 0})
    with gunicorn_server(database_url, workers=1, WEBHOOK_ALLOW_PRIVATE_TARGETS=1) as base:
        api_client = generated.AuthenticatedClient(
            base_url=base,
            token=headers["Authorization"].split(" ", 1)[1],
            headers={"X-Tenant-ID": headers["X-Tenant-ID"]},
            raise_on_unexpected_status=True,
        )
        for index in range(3):
            body = models.ProductCreate(sku=f"GEN-{index}", title=f"Generated {index}")
            created = call(operation("products", "create_product"), client=api_client, body=body)
            assert isinstance(created.parsed, models.ProductEnvelope)
            assert created.parsed.data.sku == f"GEN-{index}"
        stock_up(tenant, warehouse, {"GEN-0": 5, "GEN-1": 5})

        # a list read page by page with the cursor
        seen, cursor = [], None
        while True:
            kwargs = {"limit": 2} if cursor is None else {"limit": 2, "cursor": cursor}
            page = call(operation("products", "list_products"), client=api_client, **kwargs).parsed
            assert isinstance(page, models.ProductList)
            seen += [item.sku for item in page.data]
            cursor = page.meta.next_cursor
            if not cursor:
                break
        assert sorted(seen) == ["GEN-0", "GEN-1", "GEN-2"]

        patched = call(
            operation("products", "update_product"),
            client=api_client,
            sku="GEN-1",
            body=models.ProductUpdate(title="Renamed"),
        ).parsed
        assert patched.data.title == "Renamed"

        # an order, shipped
        _, order_id = upsert_order(
            tenant.id,
            order_body("GEN-ORDER", line_items=[ORDER_LINE]),
            source="import",
            created_by="test",
        )
        shipped = call(
            operation("orders", "confirm_order_shipment"),
            client=api_client,
            order_id=order_id,
            body=models.Shipment(carrier="UPS", tracking_number="1Z1"),
        ).parsed
        assert isinstance(shipped.data.shipment, models.ShipmentInfo)
        assert shipped.data.shipment.carrier == "UPS"

        # a job, dispatched and read back with its result, typed by the job's type
        job_body = models.JobCreateCompetitorScan.from_dict(
            {"type": "competitor_scan", "params": {"marketplace": "amazon", "skus": ["GEN-0"]}}
        )
        dispatched = call(operation("ai_jobs", "dispatch_job"), client=api_client, body=job_body)
        job_id = dispatched.parsed.data.id
        assert dispatched.headers["Location"] == f"/api/ai-jobs/{job_id}"
        run_worker(app)
        job = call(operation("ai_jobs", "get_job"), client=api_client, job_id=job_id).parsed
        assert isinstance(job.data, models.JobCompetitorScan)
        assert job.data.status.value == "completed"
        assert isinstance(job.data.result, models.JobResultCompetitorScan)
        assert job.data.result.sku_count == 1

        # a webhook with an idempotency key, then one without: the key is not carried over
        hook = models.WebhookCreate.from_dict({"url": "http://127.0.0.1:9/hook", "events": ["*"]})
        create_webhook = operation("webhooks", "create_webhook")
        first = call(create_webhook, client=api_client, body=hook, idempotency_key="gen-1")
        replay = call(create_webhook, client=api_client, body=hook, idempotency_key="gen-1")
        assert replay.headers["Idempotent-Replayed"] == "true"
        assert replay.parsed.data.id == first.parsed.data.id
        assert first.headers["Location"] == f"/api/webhooks/{first.parsed.data.id}"
        second = call(create_webhook, client=api_client, body=hook)
        assert "Idempotent-Replayed" not in second.headers
        assert second.parsed.data.id != first.parsed.data.id
        assert isinstance(second.parsed.data, models.WebhookWithSecret)
