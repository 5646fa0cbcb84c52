"""Each answer the app gives during a test, checked against the operation's documented
responses (issue 37): a 2xx JSON body validates under the documented schema (OpenAPI 3.1's
JSON Schema), a 2xx is answered with the media type documented for it, and an error's
status is one the operation documents, with its envelope's code among the codes the
description of that status lists (`` `CODE` ``). Mismatches are recorded, and the test fails.
"""

import re

from flask import request_finished
from openapi_schema_validator import OAS31Validator

from tests.support.openapi_support import resolve

_RULE_ARG = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")
_CODE = re.compile(r"`([A-Z][A-Z0-9_]*)`")


def documented_codes(response_doc) -> set[str]:
    """The error codes a documented response lists in its description."""
    return set(_CODE.findall(response_doc.get("description", "")))


class DocumentedResponses:
    """Connects to ``request_finished`` of ``app``; ``mismatches`` lists what differed."""

    def __init__(self, app, spec):
        self.app = app
        self.spec = spec
        self.mismatches: list[str] = []
        self.checked = 0

    def __enter__(self):
        request_finished.connect(self.receive, self.app)
        return self

    def __exit__(self, *exc):
        request_finished.disconnect(self.receive, self.app)

    def operation(self, req):
        if req.url_rule is None:
            return None
        return self.spec["paths"].get(self.path(req), {}).get(req.method.lower())

    @staticmethod
    def path(req):
        return _RULE_ARG.sub(r"{\1}", req.url_rule.rule)

    def check_code(self, where, response_doc, response):
        """An error answered in the envelope names a code the status's description lists."""
        if response.mimetype != "application/json" or response.is_streamed:
            return
        body = response.get_json(silent=True)
        error = body.get("error") if isinstance(body, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        if isinstance(code, str) and code not in documented_codes(response_doc):
            self.mismatches.append(f"{where}: error code {code} not documented")

    def receive(self, sender, response, **extra):
        from flask import request

        operation = self.operation(request)
        if operation is None or response.status_code >= 500:
            return
        where = f"{request.method} {self.path(request)} -> {response.status_code}"
        documented = operation["responses"]
        status = str(response.status_code)
        if status not in documented:  # ``default`` stands for the 500s only
            self.mismatches.append(f"{where}: status not documented")
            return
        self.checked += 1
        if not 200 <= response.status_code < 300:
            self.check_code(where, resolve(self.spec, documented[status]), response)
            return
        content = resolve(self.spec, documented[status]).get("content") or {}
        mimetype = response.mimetype or None
        has_body = response.is_streamed or bool(response.content_length)
        if response.status_code == 204 or not has_body and not content:
            if content:
                self.mismatches.append(f"{where}: documented with a body, answered none")
            return
        if mimetype not in content:
            self.mismatches.append(f"{where}: {mimetype} answered, {sorted(content)} documented")
            return
        if mimetype != "application/json" or response.is_streamed:
            return
        schema = content[mimetype].get("schema")
        if schema is None:
            return
        validator = OAS31Validator({**schema, "components": self.spec["components"]})
        for error in validator.iter_errors(response.get_json()):
            path = "/".join(map(str, error.absolute_path))
            self.mismatches.append(f"{where}: {path}: {error.message[:200]}")
            break
