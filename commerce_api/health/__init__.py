"""The unauthenticated health check."""
