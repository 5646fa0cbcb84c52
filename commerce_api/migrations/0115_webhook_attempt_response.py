"""What the receiver answered, kept with each webhook attempt (issue 36, DESIGN 7):
``webhook_attempt.response_body`` (the first ``webhooks.sender.MAX_STORED_BODY_BYTES``
(4 KiB) of the answer's body as text; null when there was no answer or the body is not
text), ``response_body_size`` (bytes read of it, up to the sender's read limit) and
``response_body_binary`` (the body is not UTF-8 text: shown as such, not stored).

Plain SQL on both engines; no live model is imported. Old attempts keep nulls.
"""

COLUMNS = (
    ("response_body", "TEXT"),
    ("response_body_size", "INTEGER"),
    ("response_body_binary", "BOOLEAN"),
)


def up(migrator, db):
    present = {column.name for column in db.get_columns("webhook_attempt")}
    for name, declaration in COLUMNS:
        if name not in present:
            db.execute_sql(f'ALTER TABLE "webhook_attempt" ADD COLUMN "{name}" {declaration}')
