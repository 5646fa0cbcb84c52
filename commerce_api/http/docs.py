"""OpenAPI JSON and an interactive docs page whose assets come from an installed package."""

import os

from flask import Blueprint, current_app, send_from_directory
from swagger_ui_bundle import swagger_ui_path

from ..auth.middleware import public
from .envelope import json_response
from .openapi import build_document

bp = Blueprint("apidocs", __name__)

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Commerce API</title>
  <link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/api/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: "/api/openapi.json",
      dom_id: "#swagger-ui",
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      layout: "BaseLayout"
    });
  </script>
</body>
</html>
"""


@bp.get("/api/openapi.json")
@public
def openapi_json():
    extension = current_app.extensions["commerce"]
    document = extension.get("openapi")
    if document is None:  # built once: the routes and job types do not change
        document = extension["openapi"] = build_document(extension["api"])
    return json_response(document)


@bp.get("/api/docs")
@public
def docs_page():
    return current_app.response_class(PAGE, mimetype="text/html")


@bp.get("/api/docs/assets/<path:filename>")
@public
def docs_asset(filename):
    return send_from_directory(os.fspath(swagger_ui_path), filename, max_age=3600)
