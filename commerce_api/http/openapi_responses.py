"""Response schemas as exact as the output: required fields and timestamps.

A schema only responses use (not a request body's nor a parameter's) lists every property
as ``required``, except the ones ``SOMETIMES`` names (those the output carries only in
some states); a schema whose fields say ``required=True`` themselves keeps its own list.
A list or a resource read with ``fields=`` has only the fields asked for: the documented
exception (DESIGN 12). Timestamps (``*_at``, ``timestamp``, ``shipped_date``) carry
``format: date-time``.
"""

import fnmatch

from ..jobs.shapes import JOB_HEAD
from ..jobs.store import JOB_FIELDS

# component name (fnmatch pattern) -> properties present only in some states
SOMETIMES = {
    # jobs: by status (DESIGN 8) and by what the caller may read (redacted)
    "Job_*": ("params", *(name for name in JOB_FIELDS if name not in JOB_HEAD)),
    # only with the job's domain read scope
    "JobError": ("details",),
    # a bulk item's error names the item by its key: sku (products, stock), order_id
    "BulkError": ("sku", "order_id"),
}
TIMESTAMP_NAMES = ("timestamp", "shipped_date")
SCHEMA_PREFIX = "#/components/schemas/"


def references(node, found):
    """Add to ``found`` every ``#/components/...`` reference under ``node``."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/"):
            found.add(ref)
        for value in node.values():
            references(value, found)
    elif isinstance(node, list):
        for item in node:
            references(item, found)


def _refs(node, found):
    """Add to ``found`` the names of the component schemas ``node`` refers to."""
    refs = set()
    references(node, refs)
    found.update(r.rsplit("/", 1)[1] for r in refs if r.startswith(SCHEMA_PREFIX))


def _closure(schemas, names):
    seen, pending = set(names), list(names)
    while pending:
        found = set()
        _refs(schemas.get(pending.pop()), found)
        for name in found - seen:
            seen.add(name)
            pending.append(name)
    return seen


def response_only_schemas(document):
    """Names of the component schemas reached from responses and not from requests."""
    schemas = document["components"]["schemas"]
    responses, requests = set(), set()
    for item in document["paths"].values():
        for method, operation in item.items():
            if method == "parameters":
                continue
            _refs(operation.get("responses"), responses)
            _refs(operation.get("requestBody"), requests)
            _refs(operation.get("parameters"), requests)
    return _closure(schemas, responses) - _closure(schemas, requests)


def _sometimes(name):
    return {
        field
        for pattern, fields in SOMETIMES.items()
        if fnmatch.fnmatchcase(name, pattern)
        for field in fields
    }


def _is_string(node):
    kind = node.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def exact_responses(document):
    schemas = document["components"]["schemas"]
    for name in sorted(response_only_schemas(document)):
        schema = schemas[name]
        properties = schema.get("properties")
        if not properties:
            continue
        if "required" not in schema:  # a schema that marks its required fields decides
            optional = _sometimes(name)
            schema["required"] = [field for field in properties if field not in optional]
        for field, node in properties.items():
            timestamp = field.endswith("_at") or field in TIMESTAMP_NAMES
            if timestamp and _is_string(node) and "format" not in node:
                node["format"] = "date-time"
