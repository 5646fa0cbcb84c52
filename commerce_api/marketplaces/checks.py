"""``GET /api/marketplaces/:id/check``: one cheap authenticated call to the marketplace."""

from typing import Any

from .base import ConnectorError
from .gateway import call
from .models import MarketplaceConnection


def check_connection(connection: MarketplaceConnection) -> dict[str, Any]:
    """``{ok, detail, code}``: whether the marketplace takes the connection's credentials.

    A refused token is said plainly (``code`` ``AUTH``; the connection's ``status_reason``
    records it, the gateway's doing); nothing else is written."""
    try:
        answer = call(connection, "check", lambda connector: connector.check()).result
    except ConnectorError as exc:
        return {"ok": False, "detail": exc.message, "code": exc.code}
    return {"ok": bool(answer.get("ok")), "detail": str(answer.get("detail") or ""), "code": None}
