"""The console's server-side sessions (migration 0080)."""

from peewee import BigIntegerField, CharField

from ..crypto import EncryptedTextField
from ..db import BaseModel, JSONField


class ConsoleSession(BaseModel):
    id = CharField(primary_key=True, max_length=64)  # SHA-256 of the cookie's token
    tenant_id = CharField(max_length=36)  # the tenant the pages show ("" before a pick)
    kind = CharField(max_length=10)  # "api_key" or "user"
    principal = CharField(max_length=200)  # the key id, or the user's sub
    credential = EncryptedTextField()  # the API key or user JWT, sent to the API as Bearer
    tenants = JSONField(null=True)  # a user's tenants (the picker); None for a key
    csrf_token = CharField(max_length=64)
    created_at = BigIntegerField()
    last_seen_at = BigIntegerField()
    expires_at = BigIntegerField()  # the absolute end, whatever the activity
    revoked_at = BigIntegerField(null=True)

    class Meta:
        table_name = "console_session"


class ConsoleLogin(BaseModel):
    """A sign-in through the identity provider under way (migration 0081), used once."""

    id = CharField(primary_key=True, max_length=64)  # SHA-256 of the ``state``
    code_verifier = EncryptedTextField()  # PKCE
    nonce = CharField(max_length=64)
    next_path = CharField(max_length=2000, null=True)
    created_at = BigIntegerField()

    class Meta:
        table_name = "console_login"
