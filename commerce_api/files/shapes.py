"""Response shapes of imports: the upload's summary and the import job's result."""

import marshmallow as ma


class ImportErrorSchema(ma.Schema):
    row = ma.fields.Integer(
        required=True, metadata={"description": "The file's row number; the header is row 1."}
    )
    column = ma.fields.String(required=True, allow_none=True)
    code = ma.fields.String(required=True)
    message = ma.fields.String(required=True)


class ImportResultSchema(ma.Schema):
    upload_id = ma.fields.String(required=True)
    filename = ma.fields.String(required=True, allow_none=True)
    type = ma.fields.String(
        required=True, validate=ma.validate.OneOf(("products", "inventory", "listings"))
    )
    dry_run = ma.fields.Boolean(required=True)
    rows = ma.fields.Integer(required=True, metadata={"description": "Data rows read."})
    created = ma.fields.Integer(required=True)
    updated = ma.fields.Integer(required=True)
    unchanged = ma.fields.Integer(
        required=True, metadata={"description": "Rows equal to what is stored: no change."}
    )
    failed = ma.fields.Integer(required=True)
    errors = ma.fields.List(
        ma.fields.Nested(ImportErrorSchema),
        required=True,
        metadata={"description": "Per-row errors, by row (the first 1,000)."},
    )
    errors_truncated = ma.fields.Boolean(required=True)


class ImportSchema(ma.Schema):
    id = ma.fields.String(required=True, metadata={"example": "imp_01JD3Q9Z7G0000000000000000"})
    job_id = ma.fields.String(
        required=True, metadata={"description": "Poll GET /api/ai-jobs/:id for progress."}
    )
    type = ma.fields.String(
        required=True, validate=ma.validate.OneOf(("products", "inventory", "listings"))
    )
    rows = ma.fields.Integer(required=True)
    dry_run = ma.fields.Boolean(required=True)
