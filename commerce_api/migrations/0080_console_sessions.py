"""``console_session``: the merchant console's sign-ins (DESIGN 15), kept server-side.

The cookie holds a random token; the row is found by the token's SHA-256, so a copy of the
table signs nobody in. The credential (the API key, or the user JWT of an OpenID Connect
sign-in) is stored encrypted like connector tokens. Plain SQL; no live model.
"""


def up(migrator, db):
    db.execute_sql(
        'CREATE TABLE IF NOT EXISTS "console_session" ('
        '"id" VARCHAR(64) NOT NULL PRIMARY KEY, '
        '"tenant_id" VARCHAR(36) NOT NULL, '
        '"kind" VARCHAR(10) NOT NULL, '
        '"principal" VARCHAR(200) NOT NULL, '
        '"credential" TEXT NOT NULL, '
        '"tenants" TEXT, '
        '"csrf_token" VARCHAR(64) NOT NULL, '
        '"created_at" BIGINT NOT NULL, '
        '"last_seen_at" BIGINT NOT NULL, '
        '"expires_at" BIGINT NOT NULL, '
        '"revoked_at" BIGINT)'
    )
    db.execute_sql(
        'CREATE INDEX IF NOT EXISTS "console_session_expires_at" ON "console_session" (expires_at)'
    )
