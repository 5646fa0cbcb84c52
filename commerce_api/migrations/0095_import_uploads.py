"""``import_upload`` and ``import_part``: CSV files uploaded to ``POST /api/imports``, kept
in parts of 1 MiB until their job has read them (DESIGN 14, files)."""

from peewee import BigIntegerField, BlobField, BooleanField, CharField, IntegerField

from commerce_api.migrations.frozen import Frozen


class ImportUpload(Frozen):
    id = CharField(primary_key=True, max_length=40)
    tenant_id = CharField(max_length=36, index=True)
    type = CharField(max_length=16)
    dry_run = BooleanField()
    filename = CharField(max_length=255, null=True)
    size_bytes = BigIntegerField()
    rows = IntegerField()
    job_id = CharField(max_length=40, null=True)
    created_by = CharField(max_length=255, null=True)
    created_at = BigIntegerField()


class ImportPart(Frozen):
    upload_id = CharField(max_length=40)
    seq = IntegerField()
    data = BlobField()

    class Meta:
        primary_key = False
        indexes = ((("upload_id", "seq"), True),)


def up(migrator, db):
    with db.bind_ctx([ImportUpload, ImportPart]):
        db.create_tables([ImportUpload, ImportPart], safe=True)
