"""The event catalogue: every type has an example body, in the README and the OpenAPI
document, and the examples have the shape of the events the service really writes."""

import json
import os
import re

from commerce_api.events.catalogue import CATALOGUE, SUBSCRIBABLE, example_body
from commerce_api.events.models import EVENT_TYPES, Event
from tests.support import webhooks_support
from tests.support.servers import ROOT
from tests.support.webhooks_support import create_webhook

hooks_app = webhooks_support.hooks_app  # private targets allowed: no DNS look-up


def readme_examples():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("### Event catalogue", 1)[1].split("\n## ", 1)[0]
    return {
        match.group(1): json.loads(match.group(2))
        for match in re.finditer(r"#### `([a-z_.]+)`\n\n```json\n(.*?)\n```", section, re.S)
    }


def test_every_event_type_is_in_the_catalogue_and_the_readme():
    assert set(CATALOGUE) == set(EVENT_TYPES)
    assert "listing.sync_failed" in CATALOGUE
    examples = readme_examples()
    assert list(examples) == list(CATALOGUE)
    for event_type, body in examples.items():
        assert body == example_body(event_type), event_type


def test_the_openapi_document_lists_the_types(client):
    spec = client.get("/api/openapi.json").get_json()
    create = spec["paths"]["/api/webhooks"]["post"]
    schema = create["requestBody"]["content"]["application/json"]["schema"]
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    assert schema["properties"]["events"]["items"]["enum"] == [*SUBSCRIBABLE, "*"]
    (callback,) = create["callbacks"]["event"].values()
    content = callback["post"]["requestBody"]["content"]["application/json"]
    assert content["schema"]["properties"]["type"]["enum"] == list(EVENT_TYPES)
    shown = {example["value"]["type"] for example in content["examples"].values()}
    assert shown == set(EVENT_TYPES)


def test_examples_have_the_shape_of_real_events(hooks_app, client, headers):
    hook = create_webhook(client, headers, "https://example.com/hooks")
    created = client.post(
        "/api/products",
        json={"sku": "MUG-1", "title": "Mug", "category": "kitchen"},
        headers=headers,
    )
    assert created.status_code == 201
    client.patch("/api/products/MUG-1", json={"title": "Mug, white"}, headers=headers)
    client.delete("/api/products/MUG-1", headers=headers)
    client.post(f"/api/webhooks/{hook['id']}/test", headers=headers)
    real = {event.type: event.data for event in Event.select()}
    for event_type in ("product.created", "product.updated", "product.archived", "webhook.test"):
        assert set(real[event_type]) == set(CATALOGUE[event_type][1]), event_type
