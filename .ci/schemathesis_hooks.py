"""schemathesis hooks for .ci/run_schemathesis.py (see docs/decisions.md for each reason).

- ``cursor`` is opaque: only a cursor the service issued is valid, any other is refused as
  INVALID_CURSOR (400), which no schema can describe; generated queries do not send one.
"""

import schemathesis


@schemathesis.hook
def map_query(context, query):
    if query and "cursor" in query:
        query = {name: value for name, value in query.items() if name != "cursor"}
    return query
