"""commerce_api/sql.py: statements whose table and column names come from the models."""

import importlib
import pathlib
import string

import peewee
import pytest

from commerce_api import sql
from commerce_api.claims import OperationClaim
from commerce_api.db import db, write_transaction
from commerce_api.leases import DueProbe, Lease
from commerce_api.pricing.models import Recommendation

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "commerce_api"


def _claim_row(resource_id, expires_at=100, token="t1", tenant_id="ten"):
    return {
        "resource_id": resource_id,
        "tenant_id": tenant_id,
        "operation": "ship",
        "token": token,
        "expires_at": expires_at,
        "created_at": 1,
    }


def _claims():
    return {
        row["resource_id"]: row
        for row in OperationClaim.select().order_by(OperationClaim.resource_id).dicts()
    }


# -- rendering ------------------------------------------------------------------------------


def test_a_statement_takes_names_from_the_model_and_marks_from_the_engine():
    statement = sql.Statement(
        "UPDATE {R} SET {R.status} = {p:status} WHERE {R.tenant} = {p:tenant}"
        " AND {R.sku} IN ({in:skus})",
        R=Recommendation,
    )
    assert statement.render("?", {"skus": 2}) == (
        'UPDATE "pricing_recommendation" SET "status" = ? WHERE "tenant_id" = ? AND "sku" IN (?, ?)'
    )
    assert statement.render("%s", {"skus": 1}) == (
        'UPDATE "pricing_recommendation" SET "status" = %s WHERE "tenant_id" = %s AND "sku" IN (%s)'
    )
    # a foreign key is found by its field name or by its column's
    same = sql.Statement("SELECT {R.tenant_id} FROM {R}", R=Recommendation)
    assert same.render("?") == 'SELECT "tenant_id" FROM "pricing_recommendation"'


def test_named_parameters_are_bound_in_each_engines_mark_order():
    statement = sql.Statement(
        "UPDATE {R} SET {R.status} = {p:status} WHERE {R.tenant} = {p:tenant}"
        " AND ({R.created_at} < {p:now} OR {R.updated_at} < {p:now})"
        " AND {R.sku} IN ({in:skus})",
        R=Recommendation,
    )
    assert statement.names == ("status", "tenant", "now", "now", "skus")
    assert statement.render("?", {"skus": 2}) == (
        'UPDATE "pricing_recommendation" SET "status" = ? WHERE "tenant_id" = ?'
        ' AND ("created_at" < ? OR "updated_at" < ?) AND "sku" IN (?, ?)'
    )
    assert statement.render("%s", {"skus": 3}) == (
        'UPDATE "pricing_recommendation" SET "status" = %s WHERE "tenant_id" = %s'
        ' AND ("created_at" < %s OR "updated_at" < %s) AND "sku" IN (%s, %s, %s)'
    )
    # the values in the marks' order, whatever the mapping's order; a list spread
    params = {"now": 5, "skus": iter(["a", "b"]), "tenant": "t", "status": "s"}
    assert statement.bind(params) == (["s", "t", 5, 5, "a", "b"], (("skus", 2),))


def test_a_missing_or_unknown_name_and_positions_are_refused():
    statement = sql.Statement(
        "SELECT 1 FROM {C} WHERE {C.token} = {p:token} AND {C.operation} = {p:operation}",
        C=OperationClaim,
    )
    with pytest.raises(ValueError, match="missing parameters \\['operation'\\]"):
        statement.bind({"token": "t"})
    with pytest.raises(ValueError, match="unknown \\['tokne'\\]"):
        statement.bind({"token": "t", "operation": "o", "tokne": "t"})
    with pytest.raises(TypeError):
        statement.bind(("t", "o"))  # positions: refused
    with pytest.raises(TypeError):
        statement.execute(("t", "o"))
    with pytest.raises(TypeError):
        statement.executemany([("t", "o")])
    with pytest.raises(ValueError):
        sql.Statement("SELECT 1").bind({"a": 1})  # no parameters: nothing may be given
    bare = sql.Statement("SELECT {p}")  # a mark only rendered, for a text run elsewhere
    assert bare.render("?") == "SELECT ?"
    with pytest.raises(TypeError):
        bare.execute({})
    with pytest.raises(ValueError):
        sql.Statement("SELECT {p:a}, {p}")  # names or bare marks, not both
    with pytest.raises(ValueError):
        sql.Statement("SELECT {p:a} WHERE x IN ({in:a})")  # a value or a list, not both
    with pytest.raises(KeyError):
        sql.Statement("SELECT 1 WHERE x IN ({in:a})").render("?")  # the list's length


def test_a_named_statement_runs_on_the_bound_engine(app):
    with db.connection_context():
        with write_transaction():
            sql.insert_rows(OperationClaim, [_claim_row("a"), _claim_row("b", token="t2")])
        select = sql.Statement(
            "SELECT {C.resource_id} FROM {C} WHERE {C.token} = {p:token}"
            " OR ({C.token} = {p:other} AND {C.token} <> {p:token})"
            " ORDER BY {C.resource_id}",
            C=OperationClaim,
        )
        assert select.execute({"token": "t1", "other": "t2"}).fetchall() == [("a",), ("b",)]
        assert select.execute({"token": "t2", "other": "t2"}).fetchall() == [("b",)]


def test_a_statement_is_rendered_once_per_mark_parts_and_list_length():
    statement = sql.Statement(
        "SELECT 1 FROM {C} WHERE {C.token} IN ({in:ids}){lock}", C=OperationClaim
    )
    first = statement.render("?", {"ids": 2}, lock="")
    assert statement.render("?", {"ids": 2}, lock="") is first  # the cached text
    assert statement.render("?", {"ids": 1}, lock="") == (
        'SELECT 1 FROM "operation_claim" WHERE "token" IN (?)'
    )
    assert statement.render("%s", {"ids": 2}, lock="") == first.replace("?", "%s")


def test_a_name_the_model_does_not_have_fails_loudly():
    with pytest.raises(KeyError):
        sql.Statement("SELECT {C.nope} FROM {C}", C=OperationClaim).render("?")
    with pytest.raises(KeyError):  # a part not given
        sql.Statement("SELECT 1 FROM {C} WHERE {where}", C=OperationClaim).render("?")


def _service_statements():
    """Every ``Statement`` a module of the service keeps (at module level or in a dict)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(relative.parts).removesuffix(".__init__")
        if ".migrations" in name or name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            values = value.values() if isinstance(value, dict) else [value]
            # a lease's claims and a due probe's look are statements too
            values = [
                item
                for value in values
                for item in (
                    list(value.statements)
                    if isinstance(value, Lease)
                    else [value.statement]
                    if isinstance(value, DueProbe)
                    else [value]
                )
            ]
            found += [
                (f"{name}.{attribute}", item) for item in values if isinstance(item, sql.Statement)
            ]
    return found


def test_every_statement_of_the_service_renders_on_both_engines():
    statements = _service_statements()
    assert len(statements) >= 30, [name for name, _ in statements]
    for name, statement in statements:
        fields = {field for _, field, _, _ in string.Formatter().parse(statement.template) if field}
        parts = {
            field: "x"
            for field in fields
            if field not in ("p", "in") and field.split(".")[0] not in statement.models
        }
        lengths = dict.fromkeys(statement.lists, 2)
        for param in ("?", "%s"):
            text = statement.render(param, lengths, **parts)
            assert "{" not in text and "}" not in text, (name, text)
            other = "%s" if param == "?" else "?"
            assert other not in text, (name, text)


def test_insert_update_and_upsert_statements(app):
    insert = sql.insert_statement(OperationClaim, ("resource_id", "token"))
    assert insert.replace("%s", "?") == (
        'INSERT INTO "operation_claim" ("resource_id", "token") VALUES (?, ?)'
    )
    ignore = sql.insert_statement(OperationClaim, ("resource_id",), on_conflict="DO NOTHING")
    assert ignore.endswith(" ON CONFLICT DO NOTHING")
    update = sql.update_statement(OperationClaim, ("token", "expires_at"), "resource_id")
    assert update.replace("%s", "?") == (
        'UPDATE "operation_claim" SET "token" = ?, "expires_at" = ? WHERE "resource_id" = ?'
    )
    upsert = sql.upsert_statement(OperationClaim, ("resource_id",), "expires_at")
    assert upsert.startswith(sql.insert_statement(OperationClaim) + " ON CONFLICT (resource_id)")
    assert '"token" = excluded."token"' in upsert
    assert '"resource_id" = excluded' not in upsert  # the key is not replaced
    assert upsert.endswith(' WHERE excluded."expires_at" >= "operation_claim"."expires_at"')


# -- running --------------------------------------------------------------------------------


def test_a_statement_runs_with_its_parameters(app):
    with db.connection_context():
        with write_transaction():
            sql.insert_rows(OperationClaim, [_claim_row("a"), _claim_row("b", token="t2")])
        select = sql.Statement(
            "SELECT {C.resource_id} FROM {C} WHERE {C.token} IN ({in:tokens})"
            " AND {C.tenant_id} = {p:tenant} ORDER BY {C.resource_id}",
            C=OperationClaim,
        )
        rows = select.execute({"tokens": ["t1", "t2"], "tenant": "ten"}).fetchall()
        assert [row[0] for row in rows] == ["a", "b"]
        assert select.execute({"tenant": "ten", "tokens": ("t2",)}).fetchall() == [("b",)]
        update = sql.Statement(
            "UPDATE {C} SET {C.expires_at} = {p:at} WHERE {C.resource_id} = {p:id}",
            C=OperationClaim,
        )
        with write_transaction():
            update.executemany([{"id": "a", "at": 5}, {"at": 6, "id": "b"}])
        assert {k: row["expires_at"] for k, row in _claims().items()} == {"a": 5, "b": 6}


def test_executemany_writes_one_row_or_many_and_maps_integrity_errors(app):
    insert = sql.insert_statement(OperationClaim)
    fields = OperationClaim._meta.sorted_fields
    as_params = [[row[f.name] for f in fields] for row in (_claim_row(n) for n in "abcd")]
    with db.connection_context():
        with write_transaction():
            sql.executemany(insert, as_params[:1])
            sql.executemany(insert, as_params[1:3])
        assert sorted(_claims()) == ["a", "b", "c"]
        for rows in (as_params[:1], [as_params[3], as_params[0]]):
            with pytest.raises(peewee.IntegrityError), write_transaction():
                sql.executemany(insert, rows)
        assert sorted(_claims()) == ["a", "b", "c"]  # the failed transactions left nothing


def test_bulk_writes_belong_inside_a_transaction(app):
    with db.connection_context():
        with pytest.raises(RuntimeError):
            sql.insert_rows(OperationClaim, [_claim_row("a")])
        assert sql.insert_rows(OperationClaim, []) == 0
        assert _claims() == {}


def test_an_upsert_keeps_a_newer_stored_row(app):
    with db.connection_context():
        with write_transaction():
            sql.insert_rows(OperationClaim, [_claim_row("a", expires_at=200)])
        upsert = {"upsert_keys": ("resource_id",), "newer_column": "expires_at"}
        with write_transaction():
            older = _claim_row("a", expires_at=100, token="old")
            assert sql.insert_rows(OperationClaim, [older], **upsert) == 1
        assert _claims()["a"]["token"] == "t1"
        with write_transaction():
            newer = _claim_row("a", expires_at=300, token="new")
            sql.insert_rows(OperationClaim, [newer, _claim_row("b")], **upsert)
        claims = _claims()
        assert (claims["a"]["token"], claims["a"]["expires_at"]) == ("new", 300)
        assert sorted(claims) == ["a", "b"]


def test_prepared_in_is_built_once_per_list_length(app):
    def build(tenant_id, ids):
        return (
            OperationClaim.select(OperationClaim.resource_id, OperationClaim.expires_at)
            .where((OperationClaim.tenant_id == tenant_id) & OperationClaim.resource_id.in_(ids))
            .order_by(OperationClaim.resource_id)
        )

    prepared = sql.PreparedIn(build, 1)
    with db.connection_context():
        with write_transaction():
            rows = [_claim_row("a"), _claim_row("b", expires_at=7), _claim_row("c", tenant_id="x")]
            sql.insert_rows(OperationClaim, rows)
        assert prepared.dicts("ten", values=["a", "b", "c"]) == [
            {"resource_id": "a", "expires_at": 100},
            {"resource_id": "b", "expires_at": 7},
        ]
        assert prepared.tuples("ten", values=["b", "z", "c"]) == [("b", 7)]
        assert prepared.tuples("x", values=iter(["c"])) == [("c", 100)]
    assert sorted(prepared._by_length) == [1, 3]
