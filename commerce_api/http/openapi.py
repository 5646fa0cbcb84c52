"""The served OpenAPI document: flask-smorest's, made as exact as the validators.

What the schemas alone cannot say is added here, once per app:
- ``POST /api/ai-jobs`` and ``/api/ai-jobs/batch`` take ``oneOf`` per public job type
  (from the job-type registry), discriminated by ``type``, each with its own ``params``;
- every ``PATCH`` needs a body with at least one field (``EMPTY_PATCH``, 400);
- every operation may answer 414 / 431 (``http/limits.py``);
- no string may hold NUL (``http/request.py``), so every string without a stricter rule
  gets the pattern ``^[^\\x00]*$``.

Field-level rules come from the schemas' validators (apispec), plus ``decimal_properties``
for ``StrictDecimal`` (its decimal places as ``multipleOf``, its magnitude limit).
"""

import copy
from decimal import Decimal

from flask import current_app

from ..errors import CATALOGUE
from ..jobs import registry
from .openapi_events import add_event_callbacks
from .openapi_ops import add_operation_details
from .openapi_responses import exact_responses, references
from .schemas import DECIMAL_LIMIT, StrictDecimal

JOB_CREATE_PATH = "/api/ai-jobs"
ERROR_REF = {"$ref": "#/components/schemas/Error"}
LIMIT_ERRORS = ("URI_TOO_LONG", "HEADERS_TOO_LARGE")
HTTP_METHODS = ("get", "post", "put", "patch", "delete")


NO_NUL = "^[^\\x00]*$"


def decimal_properties(self, field, ret=None, **kwargs):
    """apispec attribute function: what ``StrictDecimal`` checks besides its validators."""
    if not isinstance(field, StrictDecimal):
        return {}
    ret = ret or {}
    props = {"multipleOf": float(Decimal(1).scaleb(-field.places))}
    largest = float(DECIMAL_LIMIT - Decimal(1).scaleb(-field.places))
    if "maximum" not in ret:
        props["maximum"] = largest
    if "minimum" not in ret:
        props["minimum"] = -largest
    return props


def bulk_item_properties(self, field, ret=None, **kwargs):
    """apispec attribute function: a bulk list's free-form item documented as the schema
    each item is loaded with (``metadata["item_schema"]``; items are checked one by one)."""
    schema = field.metadata.get("item_schema")
    if schema is None:
        return {}
    return self.resolve_nested_schema(schema)


def _component_name(type_name):
    return "JobCreate_" + type_name


def register_job_params(api):
    """Add each public job type's params schema, and the schema of its result where its
    job type registers one (``job_type(result=...)``), to the document's components."""
    for name in registry.public_types():
        spec = registry.get(name)
        if spec.params is not None:
            api.spec.components.schema("JobParams_" + name, schema=spec.params)
        if spec.result is not None:
            api.spec.components.schema("JobResult_" + name, schema=spec.result)


def _job_variants(document):
    schemas = document["components"]["schemas"]
    create = schemas["JobCreate"]
    mapping = {}
    for name in registry.public_types():
        spec = registry.get(name)
        params = {"type": "object"}
        required = ["type"]
        if spec.params is not None:
            params = {"$ref": "#/components/schemas/JobParams_" + name}
            if schemas["JobParams_" + name].get("required"):
                required.append("params")
        variant = {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": [name]},
                "params": params,
                "priority": copy.deepcopy(create["properties"]["priority"]),
            },
            "required": required,
            "additionalProperties": False,
        }
        schemas[_component_name(name)] = variant
        mapping[name] = "#/components/schemas/" + _component_name(name)
    return {
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "type", "mapping": mapping},
    }


def _one_of_job_types(document):
    one_of = _job_variants(document)
    body = document["paths"][JOB_CREATE_PATH]["post"]["requestBody"]
    body["content"]["application/json"]["schema"] = copy.deepcopy(one_of)
    batch = document["components"]["schemas"]["BatchCreate"]
    batch["properties"]["jobs"]["items"] = copy.deepcopy(one_of)
    # the list filter takes any registered type, internal ones included
    for parameter in document["paths"][JOB_CREATE_PATH]["get"]["parameters"]:
        if parameter["name"] == "type" and parameter["in"] == "query":
            parameter["schema"]["enum"] = list(registry.known_types())


FREE_FORM = {"type": "object", "additionalProperties": True}


def _job_reads(document):
    """A job as read (``Job``) is a ``oneOf`` per type, selected by ``type``, with that
    type's params and result schemas; internal types share one variant."""
    schemas = document["components"]["schemas"]
    common = schemas["Job"]
    mapping = {}

    def variant(component, names, params, result):
        job = copy.deepcopy(common)
        job["properties"]["type"] = {"type": "string", "enum": list(names)}
        job["properties"]["params"] = params
        job["properties"]["result"] = result
        schemas[component] = job
        for name in names:
            mapping[name] = "#/components/schemas/" + component

    for name in registry.public_types():
        spec = registry.get(name)
        params = FREE_FORM
        if spec.params is not None:
            params = {"$ref": "#/components/schemas/JobParams_" + name}
        result = FREE_FORM
        if spec.result is not None:
            result = {"$ref": "#/components/schemas/JobResult_" + name}
        variant("Job_" + name, [name], params, result)
    internal = [n for n in registry.known_types() if n not in registry.public_types()]
    if internal:
        variant("Job_internal", internal, FREE_FORM, FREE_FORM)
    schemas["Job"] = {
        "oneOf": [{"$ref": ref} for ref in dict.fromkeys(mapping.values())],
        "discriminator": {"propertyName": "type", "mapping": mapping},
    }


def _resolve(document, node):
    while "$ref" in node:
        node = document["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _add_error(operation, code):
    status = str(CATALOGUE[code][0])
    response = operation["responses"].setdefault(
        status,
        {"description": "Error codes: ", "content": {"application/json": {"schema": ERROR_REF}}},
    )
    if f"`{code}`" not in response["description"]:
        if response["description"].endswith(": "):
            response["description"] += f"`{code}`"
        else:
            response["description"] += f", `{code}`"


def _patch_needs_a_field(document):
    for item in document["paths"].values():
        operation = item.get("patch")
        if operation is None:
            continue
        body = operation["requestBody"]
        body["required"] = True
        _resolve(document, body["content"]["application/json"]["schema"])["minProperties"] = 1
        _add_error(operation, "EMPTY_PATCH")


def _limits(document):
    for path, item in document["paths"].items():
        for method in HTTP_METHODS:
            if method in item:
                for code in LIMIT_ERRORS:
                    _add_error(item[method], code)
                if "{" in path:  # a path argument holding NUL names nothing (http/request.py)
                    _add_error(item[method], "RESOURCE_NOT_FOUND")


def _no_nul(node):
    """Every plain string (no pattern, enum or format of its own) refuses NUL."""
    if isinstance(node, list):
        for item in node:
            _no_nul(item)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    is_string = kind == "string" or (isinstance(kind, list) and "string" in kind)
    if is_string and not {"pattern", "enum", "format"} & node.keys():
        node["pattern"] = NO_NUL
    for key, value in node.items():
        if key not in ("example", "default", "examples"):
            _no_nul(value)


def _references(node, found):
    refs = set()
    references(node, refs)
    found.update(tuple(ref.split("/")[2:4]) for ref in refs)


def _drop_unused_components(document):
    """Leave out components nothing refers to (flask-smorest's PaginationMetadata, the job
    create schemas the oneOf replaced). Security schemes are referred to by name."""
    components = document["components"]
    used = set()
    _references(document["paths"], used)
    pending = set(used)
    while pending:
        kind, name = pending.pop()
        found = set()
        _references(components.get(kind, {}).get(name), found)
        pending |= found - used
        used |= found
    for kind, items in components.items():
        if kind != "securitySchemes":
            for name in [n for n in items if (kind, n) not in used]:
                del items[name]


def build_document(api):
    document = copy.deepcopy(api.spec.to_dict())
    _one_of_job_types(document)
    _job_reads(document)
    _patch_needs_a_field(document)
    _limits(document)
    add_operation_details(document, current_app, _add_error)
    add_event_callbacks(document)
    exact_responses(document)
    _drop_unused_components(document)
    _no_nul(document["paths"])
    _no_nul(document["components"])
    return document
