"""``console_login``: a sign-in through the identity provider while it is under way (the
OpenID Connect ``state``, the PKCE verifier and the ``nonce``), kept server-side and used
once. Plain SQL; no live model."""


def up(migrator, db):
    db.execute_sql(
        'CREATE TABLE IF NOT EXISTS "console_login" ('
        '"id" VARCHAR(64) NOT NULL PRIMARY KEY, '
        '"code_verifier" TEXT NOT NULL, '
        '"nonce" VARCHAR(64) NOT NULL, '
        '"next_path" VARCHAR(2000), '
        '"created_at" BIGINT NOT NULL)'
    )
