"""A view's documented error codes come from what its services declare they raise
(``commerce_api/errors.py``: ``@raises``; ``http/blueprint.py``: ``blp.errors(function)``),
and a declared function that raises an undeclared code is found."""

import pytest

from commerce_api.errors import UNDECLARED, ApiError, declared_codes, raises
from commerce_api.http.blueprint import Blueprint
from commerce_api.products import services


@raises("PRODUCT_NOT_FOUND")
def _find(code):
    raise ApiError(code)


@raises(_find, "DUPLICATE_SKU")
def _create(code):
    return _find(code)


def test_a_declaration_includes_the_functions_it_names_in_order():
    assert _create.__raises__ == ("PRODUCT_NOT_FOUND", "DUPLICATE_SKU")
    assert declared_codes(_create, "INVALID_GTIN", "DUPLICATE_SKU") == (
        "PRODUCT_NOT_FOUND",
        "DUPLICATE_SKU",
        "INVALID_GTIN",
    )


def test_unknown_codes_and_undeclared_functions_are_refused():
    with pytest.raises(KeyError):
        raises("NO_SUCH_CODE")
    with pytest.raises(TypeError):
        declared_codes(len)


def test_an_undeclared_code_is_recorded_and_the_error_is_unchanged():
    try:
        with pytest.raises(ApiError) as raised:
            _create("INVALID_GTIN")
        assert raised.value.code == "INVALID_GTIN"
        found = list(UNDECLARED)
        assert found == [
            f"{__name__}._find raised INVALID_GTIN",
            f"{__name__}._create raised INVALID_GTIN",
        ]
    finally:
        UNDECLARED.clear()


def test_declared_and_validation_codes_are_not_recorded():
    for code in ("PRODUCT_NOT_FOUND", "VALIDATION_ERROR"):
        with pytest.raises(ApiError):
            _create(code)
    assert not UNDECLARED


def test_a_view_documents_its_services_codes():
    blp = Blueprint("t", __name__)

    @blp.errors(services.archive_product, auth=False)
    def view():
        """A view"""

    responses = view._apidoc["response"]["responses"]
    assert [d["description"] for d in responses[404]] == ["Error codes: `PRODUCT_NOT_FOUND`"]
    assert [d["description"] for d in responses[409]] == ["Error codes: `OPEN_ORDERS_EXIST`"]
