"""A flask-smorest Blueprint that documents our error envelope by code."""

from collections import defaultdict

import flask_smorest
import marshmallow as ma
from webargs.flaskparser import FlaskParser

from ..errors import CATALOGUE
from .schemas import ErrorSchema

# Errors any authenticated endpoint can answer.
AUTH_ERRORS = (
    "INVALID_TENANT_HEADER",
    "UNAUTHENTICATED",
    "TENANT_ACCESS_DENIED",
    "IP_NOT_ALLOWED",
    "INSUFFICIENT_SCOPE",
    "RATE_LIMITED",
)
BODY_ERRORS = ("INVALID_JSON", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE", "VALIDATION_ERROR")


class StrictParser(FlaskParser):
    """Unknown fields in a body or a query string are errors, not silently dropped."""

    DEFAULT_UNKNOWN_BY_LOCATION = {
        **FlaskParser.DEFAULT_UNKNOWN_BY_LOCATION,
        "json": ma.RAISE,
        "query": ma.RAISE,
        "querystring": ma.RAISE,
    }


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = StrictParser()

    def errors(self, *codes, auth=True, body=False):
        """Document the error responses of a view, grouped by HTTP status."""
        all_codes = list(codes)
        if auth:
            all_codes += AUTH_ERRORS
        if body:
            all_codes += BODY_ERRORS
        by_status = defaultdict(list)
        for code in dict.fromkeys(all_codes):
            by_status[CATALOGUE[code][0]].append(code)

        def decorator(func):
            for status, names in sorted(by_status.items()):
                func = self.alt_response(
                    status,
                    schema=ErrorSchema,
                    description="Error codes: " + ", ".join(f"`{n}`" for n in names),
                )(func)
            return func

        return decorator
