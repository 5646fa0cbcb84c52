"""Transfers of stock between a tenant's own warehouses (DESIGN 14)."""
