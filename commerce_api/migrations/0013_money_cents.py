"""SQLite: money columns hold integer cents (MoneyField), no longer floats.

A DECIMAL column has NUMERIC affinity on SQLite, so amounts were kept as REAL (or as
INTEGER when whole). Every two-place DECIMAL column is converted once; PostgreSQL already
stores NUMERIC(14, 2) and is left alone.
"""


def up(migrator, db):
    from commerce_api.db import is_postgres

    if is_postgres(db):
        return
    tables = [
        row[0] for row in db.execute_sql("SELECT name FROM sqlite_master WHERE type = 'table'")
    ]
    for table in tables:
        for column in db.execute_sql(f'PRAGMA table_info("{table}")').fetchall():
            name, declared = column[1], (column[2] or "").upper().replace(" ", "")
            if declared.startswith("DECIMAL(") and declared.endswith(",2)"):
                # round half up to the cent (amounts are never negative), then keep cents
                db.execute_sql(
                    f'UPDATE "{table}" SET "{name}" = CAST(ROUND("{name}" * 100 + 1e-9) AS INTEGER)'
                    f' WHERE "{name}" IS NOT NULL'
                )
