"""An uploaded import file, kept in the database in parts until its job is done: the job
may run on any worker host, and a part at a time keeps a worker's memory flat."""

from peewee import BigIntegerField, BlobField, BooleanField, CharField, IntegerField

from ..db import BaseModel

PART_BYTES = 1024 * 1024


class ImportUpload(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant_id = CharField(max_length=36, index=True)
    type = CharField(max_length=16)  # products | inventory | listings
    dry_run = BooleanField(default=False)
    filename = CharField(max_length=255, null=True)
    size_bytes = BigIntegerField()
    rows = IntegerField()  # data records (the header not counted)
    job_id = CharField(max_length=40, null=True)
    created_by = CharField(max_length=255, null=True)
    created_at = BigIntegerField()


class ImportPart(BaseModel):
    upload_id = CharField(max_length=40)
    seq = IntegerField()
    data = BlobField()

    class Meta:
        primary_key = False
        indexes = ((("upload_id", "seq"), True),)
