"""``worker_process.loops``: each loop of a worker and its last successful pass (JSON),
written by the heartbeat, so that readiness and ``/metrics`` can name a loop that stopped
making progress while the worker itself still heartbeats (loophealth.py)."""


def up(migrator, db):
    columns = {column.name for column in db.get_columns("worker_process")}
    if "loops" not in columns:
        db.execute_sql('ALTER TABLE "worker_process" ADD COLUMN "loops" TEXT')
