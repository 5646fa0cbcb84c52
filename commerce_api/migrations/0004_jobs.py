"""The worker fleet's tables: periodic task schedules/locks and live worker processes."""

from peewee import BigIntegerField, BooleanField, CharField, IntegerField, TextField

from commerce_api.migrations.frozen import Frozen


# The tables as this migration creates them, frozen: see migrations/frozen.py.
class PeriodicTask(Frozen):
    name = CharField(max_length=100, primary_key=True)
    interval_seconds = IntegerField()
    next_run_at = BigIntegerField()
    locked_by = CharField(max_length=100, null=True)
    locked_until = BigIntegerField(null=True)
    last_started_at = BigIntegerField(null=True)
    last_finished_at = BigIntegerField(null=True)
    last_error = TextField(null=True)
    run_count = IntegerField()

    class Meta:
        table_name = "periodic_task"


class WorkerProcess(Frozen):
    id = CharField(max_length=100, primary_key=True)
    hostname = CharField()
    pid = IntegerField()
    concurrency = IntegerField()
    started_at = BigIntegerField()
    last_seen_at = BigIntegerField(index=True)
    stopping = BooleanField()

    class Meta:
        table_name = "worker_process"


MODELS = [PeriodicTask, WorkerProcess]


def up(migrator, db):
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)
