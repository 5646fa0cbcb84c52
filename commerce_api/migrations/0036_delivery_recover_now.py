"""``webhook_delivery.recover_now``: a recovery asked for while the delivery was being sent.

``POST /api/webhooks/:id/recover`` makes a waiting delivery due at once, but one in flight
at that moment (its receiver may still be timing out) would, if the attempt fails, be put
back on the retry schedule, hours away. Recover marks such a delivery instead, and the
outcome of a failed attempt then makes it due at once (webhooks/dispatch.py). Kept out of
the model, like ``event.fanned_out_at``: no INSERT names it, its default is false.
"""


def up(migrator, db):
    columns = {column.name for column in db.get_columns("webhook_delivery")}
    if "recover_now" not in columns:
        db.execute_sql(
            'ALTER TABLE "webhook_delivery" ADD COLUMN recover_now BOOLEAN NOT NULL DEFAULT FALSE'
        )
