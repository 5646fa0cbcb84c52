"""Stock across warehouses: stock levels, the adjustments ledger and reservations."""
