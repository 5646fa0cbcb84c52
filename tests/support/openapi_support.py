"""Reading the OpenAPI document in tests."""


def resolve(spec, node):
    """``node`` with its ``$ref`` chain followed through ``spec``."""
    while isinstance(node, dict) and "$ref" in node:
        parts = node["$ref"].lstrip("#/").split("/")
        node = spec
        for part in parts:
            node = node[part]
    return node
