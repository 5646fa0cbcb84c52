"""``marketplaces connect`` takes the API token from a file or standard input as well as
``--api-token`` (issue 13, item 8), and a refused token creates no connection."""

import json

import pytest

from commerce_api.cli import cli
from commerce_api.marketplaces.models import MarketplaceConnection


def connect(runner, tenant, *args, input=None):
    return runner.invoke(
        cli,
        [
            "marketplaces", "connect", "--tenant", tenant.id, "--marketplace", "local",
            "--connector", "http", "--base-url", "http://127.0.0.1:9", "--json", *args,
        ],
        input=input,
    )  # fmt: skip


def stored_token():
    (connection,) = MarketplaceConnection.select()
    return connection.api_token


def test_token_from_a_file(runner, tenant, tmp_path):
    path = tmp_path / "token"
    path.write_text("tok-from-file-123\n")
    result = connect(runner, tenant, "--api-token-file", str(path))
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["has_api_token"] is True
    assert "tok-from-file-123" not in result.output
    assert stored_token() == "tok-from-file-123"  # the trailing newline is not part of it


def test_token_from_standard_input(runner, tenant):
    result = connect(runner, tenant, "--api-token-file", "-", input="  tok-stdin-456\r\n")
    assert result.exit_code == 0, result.output
    assert stored_token() == "tok-stdin-456"


def test_token_on_the_command_line_still_works(runner, tenant):
    result = connect(runner, tenant, "--api-token", "tok-arg")
    assert result.exit_code == 0, result.output
    assert stored_token() == "tok-arg"


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("tok", ["--api-token", "other"], "not both"),
        ("", [], "holds no token"),
        ("\n  \n", [], "holds no token"),
        ("tok-1\ntok-2\n", [], "line breaks or control characters"),
        ("tok\x00x", [], "line breaks or control characters"),
        ("t" * 2001, [], "longer than 2000"),
        (b"\xff\xfe tok", [], "not UTF-8"),
    ],
)
def test_refused_tokens_create_nothing(runner, tenant, tmp_path, content, args, message):
    path = tmp_path / "token"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    result = connect(runner, tenant, "--api-token-file", str(path), *args)
    assert result.exit_code == 2 and message in result.output, result.output
    assert MarketplaceConnection.select().count() == 0


def test_a_missing_file_is_refused(runner, tenant, tmp_path):
    result = connect(runner, tenant, "--api-token-file", str(tmp_path / "absent"))
    assert result.exit_code == 2 and "absent" in result.output, result.output
    assert MarketplaceConnection.select().count() == 0


def test_the_sandbox_takes_no_token_from_a_file_either(runner, tenant, tmp_path):
    path = tmp_path / "token"
    path.write_text("tok\n")
    result = runner.invoke(
        cli,
        ["marketplaces", "connect", "--tenant", tenant.id, "--marketplace", "amazon",
         "--connector", "sandbox", "--api-token-file", str(path)],
    )  # fmt: skip
    assert result.exit_code != 0 and "api_token" in result.output, result.output
    assert MarketplaceConnection.select().count() == 0
