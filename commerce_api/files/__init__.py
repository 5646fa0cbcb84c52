"""Catalogue, stock, ledger and orders in CSV files: imports run as jobs, exports stream
(DESIGN 14, files)."""
