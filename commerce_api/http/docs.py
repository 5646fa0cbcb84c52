"""OpenAPI JSON and an interactive docs page whose assets come from an installed package.

The page is Swagger UI 5 (it reads OpenAPI 3.1; 4.x cannot), from the ``dist`` folder the
``flask-swagger-ui`` package ships: served by the API itself, nothing from a CDN. Only the
assets are used, not that package's blueprint: the page is ours (no online validator badge,
whose image would come from outside).
"""

import importlib.resources
import os

from flask import Blueprint, current_app, send_from_directory

from ..auth.middleware import public
from .envelope import json_response
from .openapi import build_document

bp = Blueprint("apidocs", __name__)

# Swagger UI's files (swagger-ui-bundle.js, its CSS, the standalone preset)
ASSETS = os.fspath(importlib.resources.files("flask_swagger_ui") / "dist")

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
      validatorUrl: null,
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
    return send_from_directory(ASSETS, filename, max_age=3600)
