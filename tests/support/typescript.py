"""openapi-typescript and the TypeScript compiler for the suite, from the npm registry.

Pinned versions are installed once into a cached folder (``$COMMERCE_NODE_TOOLS``, default
``~/.cache/commerce-api/node-tools-<versions>``) with ``npm install``; test processes that
need them at once wait on a file lock, so one installs and the others reuse it. On a fresh
machine (CI) the first test that needs them installs them (about 10 s). Without node and
npm the tests fail under CI (``CI=true``) and are skipped elsewhere.
"""

import fcntl
import json
import os
import shutil
import subprocess

import pytest

OPENAPI_TYPESCRIPT = "7.13.0"
TYPESCRIPT = "5.9.3"
VERSIONS = f"openapi-typescript-{OPENAPI_TYPESCRIPT}-typescript-{TYPESCRIPT}"


def _folder() -> str:
    base = os.environ.get("COMMERCE_NODE_TOOLS") or os.path.join(
        os.path.expanduser("~"), ".cache", "commerce-api"
    )
    return os.path.join(base, f"node-tools-{VERSIONS}")


def node_tools() -> tuple[str, str]:
    """Paths of the ``openapi-typescript`` and ``tsc`` commands, installed when missing."""
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        message = "node and npm are needed for the TypeScript client checks"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    folder = _folder()
    bin_dir = os.path.join(folder, "node_modules", ".bin")
    tools = (os.path.join(bin_dir, "openapi-typescript"), os.path.join(bin_dir, "tsc"))
    stamp = os.path.join(folder, ".installed")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not os.path.exists(stamp):
            with open(os.path.join(folder, "package.json"), "w") as package:
                json.dump({"private": True}, package)
            result = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    folder,
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    f"openapi-typescript@{OPENAPI_TYPESCRIPT}",
                    f"typescript@{TYPESCRIPT}",
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert result.returncode == 0, result.stdout + result.stderr
            open(stamp, "w").close()
    return tools


def generate_types(document_path: str, out_path: str) -> None:
    """``openapi-typescript`` on the document, as the README tells users to run it."""
    openapi_typescript, _ = node_tools()
    result = subprocess.run(
        [openapi_typescript, document_path, "--default-non-nullable=false", "-o", out_path],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def compile_strict(folder: str, *files: str) -> subprocess.CompletedProcess:
    """``tsc --strict --noEmit`` over ``files`` (in ``folder``); the caller asserts."""
    _, tsc = node_tools()
    return subprocess.run(
        [
            tsc,
            "--strict",
            "--noEmit",
            "--target",
            "es2022",
            "--module",
            "es2022",
            "--moduleResolution",
            "bundler",
            *files,
        ],  # fmt: skip
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
