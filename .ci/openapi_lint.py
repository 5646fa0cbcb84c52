"""Lint the served OpenAPI document with Redocly CLI's recommended rules (0 errors).

Builds the app over a throwaway SQLite database, writes ``/api/openapi.json`` to a temporary
file and runs ``npx --yes @redocly/cli@<REDOCLY> lint`` on it (npm fetches the pinned
version on a fresh machine). Exits with Redocly's status.

    .venv/bin/python .ci/openapi_lint.py
"""

import json
import os
import subprocess
import sys
import tempfile

REDOCLY = "2.77.0"


def main():
    with tempfile.TemporaryDirectory(prefix="commerce-openapi-") as tmp:
        os.environ["COMMERCE_DATABASE_URL"] = "sqlite:///" + os.path.join(tmp, "api.db")
        from commerce_api import create_app

        app = create_app()
        document = app.test_client().get("/api/openapi.json").get_json()
        path = os.path.join(tmp, "openapi.json")
        with open(path, "w") as out:
            json.dump(document, out)
        command = ["npx", "--yes", f"@redocly/cli@{REDOCLY}", "lint", "--format=stylish", path]
        return subprocess.run(command, env={**os.environ, "REDOCLY_TELEMETRY": "off"}).returncode


if __name__ == "__main__":
    sys.exit(main())
