"""Authentication: API keys, user JWTs, tenants, scopes, IP allowlists."""
