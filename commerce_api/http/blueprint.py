"""A flask-smorest Blueprint that documents our error envelope by code."""

from collections import defaultdict

import flask
import flask_smorest
import marshmallow as ma
from webargs.flaskparser import FlaskParser

from ..errors import CATALOGUE, declared_codes
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

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._schemas = {}
        self._empty_queries = {}  # schema class -> its load of an empty query string

    def parse(self, argmap, req=None, *, location=None, validate=None, **kwargs):
        # Most GETs carry no query string: their arguments are the schema's defaults, the
        # same every time, so the load of {} is done once (a fresh copy is handed out).
        if (
            location in ("query", "querystring")
            and validate is None
            and isinstance(argmap, type)
            and (req or flask.request).query_string == b""
        ):
            loaded = self._empty_queries.get(argmap)
            if loaded is None:
                loaded = super().parse(argmap, req, location=location, **kwargs)
                if not isinstance(loaded, dict) or not all(
                    isinstance(v, str | int | float | bool | None) for v in loaded.values()
                ):
                    return loaded  # a mutable default: loaded afresh each time
                self._empty_queries[argmap] = loaded
            return dict(loaded)
        return super().parse(argmap, req, location=location, validate=validate, **kwargs)

    def _get_schema(self, argmap, req):
        # ``@blp.arguments(SomeSchema)`` passes a class, which webargs would instantiate
        # on every request (~50 us); a schema instance is stateless, so build it once.
        if isinstance(argmap, type) and issubclass(argmap, ma.Schema):
            schema = self._schemas.get(argmap)
            if schema is None:
                schema = self._schemas[argmap] = argmap()
            return schema
        return super()._get_schema(argmap, req)


class Blueprint(flask_smorest.Blueprint):
    """Views return a built ``Response`` (``http/envelope.py``: ``one``, ``list_page``,
    ``no_content``; a CSV stream): ``returns`` documents what they answer and wraps nothing,
    and flask-smorest's serializing ``response`` is refused (it would only document)."""

    ARGUMENTS_PARSER = StrictParser()

    def response(self, *args, **kwargs):
        raise TypeError(
            "views return a built Response: document the answer with blp.returns(status, ...)"
        )

    def returns(self, status, schema=None, *, content_type=None, description=None, headers=None):
        """Document a view's success answer (the schema under ``content_type``, JSON unless
        given; a dict schema as is, e.g. ``{"type": "string"}`` for a CSV file); the view
        builds the response itself, so nothing wraps it."""
        documenting = flask_smorest.Blueprint.response(
            self,
            status,
            schema,
            content_type=content_type,
            description=description,
            headers=headers,
        )

        def decorator(func):
            func._apidoc = documenting(func)._apidoc
            return func

        return decorator

    def errors(self, *raisers, auth=True, body=False):
        """Document the error responses of a view, grouped by HTTP status: ``raisers`` are
        catalogue codes, or the service functions the view calls, declared ``@raises``
        (their codes are documented: the list follows the declarations)."""
        # unknown query parameters are a 422 on every endpoint
        all_codes = [*declared_codes(*raisers), "VALIDATION_ERROR"]
        if auth:
            all_codes += AUTH_ERRORS
        if body:
            all_codes += BODY_ERRORS
        by_status = defaultdict(list)
        for code in dict.fromkeys(all_codes):
            by_status[CATALOGUE[code][0]].append(code)

        def decorator(func):
            for status, names in sorted(by_status.items()):
                documented = self.alt_response(
                    status,
                    schema=ErrorSchema,
                    description="Error codes: " + ", ".join(f"`{n}`" for n in names),
                )(func)
                # alt_response only adds documentation, but as a wrapper that every request
                # would go through: keep its documentation on the view, not the wrapper.
                func._apidoc = documented._apidoc
            return func

        return decorator
