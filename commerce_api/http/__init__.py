"""HTTP conventions shared by every resource: envelope, errors, lists, request hygiene."""
