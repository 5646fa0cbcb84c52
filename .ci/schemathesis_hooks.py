"""schemathesis hooks for .ci/run_schemathesis.py (see docs/decisions.md for each reason).

- ``cursor`` is opaque: only a cursor the service issued is valid, any other is refused as
  INVALID_CURSOR (400), which no schema can describe; generated queries do not send one.
- ``fields``: see schemathesis.toml (``[parameters]``; the coverage phase does not run
  this hook).
"""

import schemathesis

DROPPED = ("cursor", "fields")  # fields: also set empty by schemathesis.toml


@schemathesis.hook
def map_query(context, query):
    if query and any(name in query for name in DROPPED):
        query = {name: value for name, value in query.items() if name not in DROPPED}
    return query
