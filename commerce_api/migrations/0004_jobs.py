"""The worker fleet's tables: periodic task schedules/locks and live worker processes."""


def up(migrator, db):
    from commerce_api.jobs.models import PeriodicTask, WorkerProcess

    db.create_tables([PeriodicTask, WorkerProcess])
