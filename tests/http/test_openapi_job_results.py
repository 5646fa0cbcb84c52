"""Every public job type, run to completion on the demo tenant, read as clients read it.

Each job's ``GET /api/ai-jobs/:id`` answer must validate against the document (``Job`` is a
``oneOf`` per type: the answer must match its type's ``Job_<type>``, with that type's
``JobParams_`` and ``JobResult_``), parse through the Python client openapi-python-client
generates into that type's models with nothing left over, and be accepted under
``tsc --strict`` as the type openapi-typescript generates, narrowed by ``type`` to its
typed result. A result that lacks a field its document requires fails all three.
"""

import importlib
import json
import re
import sys

import httpx
import pytest
from openapi_schema_validator import OAS31Validator

from commerce_api.cli import cli
from commerce_api.demo import DEMO_PRODUCTS
from commerce_api.jobs import registry
from tests.analysis.test_llm import FakeProvider
from tests.http.test_openapi_clients import PACKAGE, assert_typed, generate
from tests.support.jobs_support import dispatch, jobs_app, run_worker  # noqa: F401
from tests.support.openapi_support import resolve
from tests.support.typescript import compile_strict, generate_types

pytestmark = pytest.mark.slow
SKUS = [sku for sku, *_ in DEMO_PRODUCTS]
# an answer that names one demo product by its title and the brand, another not at all
LLM_ANSWER = """Good picks:

1. **Snow Peak Titanium Mug** - light and tough.
2. **Demo Store Enamel mug, white, 350 ml** - classic enamel.
3. Any steel bottle from a camping shop.
"""


def job_params():
    """Params per public job type, chosen to reach the result's optional parts."""
    return {
        "competitor_scan": {"marketplace": "amazon"},
        "pricing_recalculate": {"marketplace": "amazon", "apply": True},
        "review_sentiment": {},
        "return_classify": {},
        "listing_optimize": {"skus": SKUS, "marketplace": "amazon"},
        "llm_visibility_score": {
            "skus": ["MUG-ENAMEL-WHT", "PEN-BRASS", "NOT-A-SKU"],
            "brand": "Demo Store",
            "queries": ["Which {category} item should I buy?"],
        },
    }


# The answers are plain JSON: made once per test process, read by the three tests below.
_ANSWERS = {}


@pytest.fixture
def answers(jobs_app, runner, tmp_path, monkeypatch):  # noqa: F811
    """``{job type: the JSON of GET /api/ai-jobs/:id}`` for every public type, completed."""
    if not _ANSWERS:
        _ANSWERS.update(run_every_job_type(jobs_app, runner, tmp_path, monkeypatch))
    return _ANSWERS


def run_every_job_type(jobs_app, runner, tmp_path, monkeypatch):  # noqa: F811
    shipped = {n for n in registry.public_types() if registry.get(n).scope is not None}
    assert set(job_params()) == shipped, "a job type is not run here"  # scope None: tests'
    assert all(registry.get(n).result is not None for n in shipped), "a result undocumented"
    monkeypatch.setattr(jobs_app, "instance_path", str(tmp_path))
    result = runner.invoke(cli, ["demo", "--json"])
    assert result.exit_code == 0, result.output
    saved = json.loads(result.output)
    headers = {"Authorization": f"Bearer {saved['api_key']}", "X-Tenant-ID": saved["tenant_id"]}
    client = jobs_app.test_client()
    provider = FakeProvider()  # serving from here on
    try:
        provider.answers = {"model-a": LLM_ANSWER, "model-b": "I have no idea."}
        for name, value in (
            ("LLM_BASE_URL", provider.base_url),
            ("LLM_API_KEY", "sk-test"),
            ("LLM_MODELS", "model-a,model-b"),
            ("LLM_RETRY_MAX_WAIT_SECONDS", 0.0),
        ):
            monkeypatch.setitem(jobs_app.config, name, value)
        ids = {}
        for job_type, params in job_params().items():
            ids[job_type] = dispatch(client, headers, job_type, params)["id"]
            run_worker(jobs_app)  # one after another: listing_optimize reads the reviews
    finally:
        provider.close()
    found = {}
    for job_type, job_id in ids.items():
        body = client.get(f"/api/ai-jobs/{job_id}", headers=headers).get_json()
        assert body["data"]["status"] == "completed", body
        assert body["data"]["result"], (job_type, "an empty result shows nothing")
        found[job_type] = body
    return found


def test_every_job_type_s_answer_validates_against_the_document(spec, answers):
    found = answers
    schema = spec["paths"]["/api/ai-jobs/{job_id}"]["get"]["responses"]["200"]["content"][
        "application/json"
    ]["schema"]
    validator = OAS31Validator({**schema, "components": spec["components"]})
    for job_type, body in found.items():
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
        assert not errors, (job_type, errors[:5])
        variant = resolve(spec, {"$ref": f"#/components/schemas/Job_{job_type}"})
        result = resolve(spec, variant["properties"]["result"])
        assert result.get("required"), (job_type, "the result schema requires its fields")
        assert set(result["required"]) <= set(body["data"]["result"]), job_type


def _camel(name):
    return "".join(part.capitalize() for part in name.split("_"))


def test_the_generated_python_client_reads_each_job_type(spec, answers, tmp_path):
    result, out = generate(spec, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    by_path = {f"/api/ai-jobs/{body['data']['id']}": body for body in answers.values()}

    def server(request):  # answers as the service gave them
        return httpx.Response(200, json=by_path[request.url.path])

    sys.path.insert(0, str(out))
    try:
        models = importlib.import_module(PACKAGE + ".models")
        get_job = importlib.import_module(f"{PACKAGE}.api.ai_jobs.get_job")
        client = importlib.import_module(PACKAGE).AuthenticatedClient(
            base_url="http://127.0.0.1",
            token="key",
            raise_on_unexpected_status=True,
            httpx_args={"transport": httpx.MockTransport(server)},
        )
        for job_type, body in answers.items():
            response = get_job.sync_detailed(client=client, job_id=body["data"]["id"])
            assert response.status_code == 200, (job_type, response.content)
            job = response.parsed.data
            assert type(job) is getattr(models, "Job" + _camel(job_type)), job_type
            assert isinstance(job.result, getattr(models, "JobResult" + _camel(job_type)))
            assert_typed(response.parsed, body)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


TS_CHECK = """import type {{ components }} from "./api";

type JobEnvelope = components["schemas"]["JobEnvelope"];
type Schemas = components["schemas"];

{checks}
"""

TS_ONE = """// {job_type}
export const {name}: JobEnvelope = {body};
if ({name}.data.type === "{job_type}") {{
  const result: Schemas["JobResult_{job_type}"] | undefined = {name}.data.result;
  const params: Schemas["JobParams_{job_type}"] | undefined = {name}.data.params;
  console.log(result, params);
}} else {{
  throw new Error("{job_type} is not narrowed by its type");
}}
"""


def test_openapi_typescript_types_accept_each_job_type_under_tsc_strict(spec, answers, tmp_path):
    found = answers
    document = tmp_path / "openapi.json"
    document.write_text(json.dumps(spec))
    generate_types(str(document), str(tmp_path / "api.d.ts"))
    checks = "\n".join(
        TS_ONE.format(job_type=job_type, name="job_" + job_type, body=json.dumps(body, indent=1))
        for job_type, body in found.items()
    )
    (tmp_path / "jobs.ts").write_text(TS_CHECK.format(checks=checks))
    result = compile_strict(str(tmp_path), "jobs.ts")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]

    # the check can fail: a result without a required field is refused
    broken = json.loads(json.dumps(found["listing_optimize"]))
    for proposal in broken["data"]["result"]["proposals"]:
        for issue in proposal["issues"]:
            issue.pop("evidence")
    (tmp_path / "broken.ts").write_text(
        TS_CHECK.format(
            checks=TS_ONE.format(
                job_type="listing_optimize", name="broken", body=json.dumps(broken, indent=1)
            )
        )
    )
    refused = compile_strict(str(tmp_path), "broken.ts")
    assert refused.returncode != 0
    assert re.search(r"evidence", refused.stdout), refused.stdout[-2000:]
