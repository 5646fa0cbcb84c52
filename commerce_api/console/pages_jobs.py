"""Jobs: dispatch, live progress (htmx polling), results a person can read."""

import json

from flask import render_template, request

from ..errors import validation_error
from ..jobs import registry
from .gateway import segment
from .web import api, args_of, bp, done, form_text, present, render, status_of

LIST_LIMIT = 25
FINISHED = ("completed", "failed", "cancelled")


def _jobs_page(status=200, errors=(), form=None):
    query = args_of("type", "status", "cursor")
    answer = api("GET", "/api/ai-jobs", {**query, "limit": LIST_LIMIT})
    return render(
        "console/jobs.html",
        status if status != 200 else status_of(answer),
        answer=answer,
        query=query,
        job_types=registry.public_types(),
        form=form or {},
        errors=[*errors, answer.error],
    )


@bp.route("/jobs")
def jobs():
    """Jobs: filters, pages by cursor, and the dispatch form."""
    return _jobs_page()


@bp.route("/jobs", methods=["POST"])
def dispatch_job():
    """Queue a job: a type, its parameters (a JSON object) and a priority."""
    raw = form_text("params") or "{}"
    try:
        params = json.loads(raw)
    except ValueError as exc:
        error = validation_error({"params": [f"Not JSON: {exc}"]})
        return _jobs_page(error.status, [error.to_dict()["error"]], request.form)
    body = present(type=form_text("type"), params=params, priority=form_text("priority"))
    answer = api("POST", "/api/ai-jobs", body=body)
    if answer.ok:
        return done("console.job", "dispatched", job_id=answer.data["id"])
    return _jobs_page(answer.status, [answer.error], request.form)


@bp.route("/jobs/<string:job_id>")
def job(job_id):
    """A job: its progress while it runs, its result once done."""
    answer = api("GET", f"/api/ai-jobs/{segment(job_id)}")
    return render(
        "console/job.html",
        status_of(answer),
        answer=answer,
        finished=FINISHED,
        errors=[answer.error],
    )


@bp.route("/jobs/<string:job_id>/progress")
def job_progress(job_id):
    """The job's state alone (htmx polls it until the job is finished)."""
    answer = api("GET", f"/api/ai-jobs/{segment(job_id)}")
    return render_template("console/_job_state.html", answer=answer, finished=FINISHED)
