"""llm_visibility_score against a local OpenAI-compatible server (an HTTP server in the test
process): request shape and Bearer header, retries on 429 and 5xx, mention detection with
its position, the position-adjusted score, LLM_NOT_CONFIGURED."""

import json
import math
import threading
from http.server import BaseHTTPRequestHandler

import marshmallow as ma
import pytest

from commerce_api.analysis.llm import (
    ChatClient,
    LlmNotConfigured,
    LlmOutOfTime,
    LlmRejected,
    LlmSettings,
    LlmUnavailable,
)
from commerce_api.analysis.results import LlmVisibilityScoreResult
from commerce_api.analysis.visibility import (
    build_queries,
    detect_mention,
    position_adjusted_visibility,
)
from commerce_api.analysis.visibility_match import CatalogueMatcher, Product, answer_units
from commerce_api.jobs.models import Job
from tests.support.factories import create_product
from tests.support.jobs_support import dispatch, jobs_app, run_worker  # noqa: F401
from tests.support.servers import LocalHTTPServer

API_KEY = "sk-test-123"
MUG_TITLE = "Enamel camping mug, white, 350 ml"
MUG_GTIN = "4006381333931"

LIST_ANSWER = """Here are some great options:

1. **Snow Peak Titanium Mug** - light and tough.
2. **GSI Outdoors Glacier Cup** - stainless steel, keeps coffee hot.
3. **Falcon Enamel Camping Mug** in white - classic enamel, 350 ml.
   - Dishwasher safe
4. **Stanley Classic Camp Mug** - insulated.

Any of these will serve you well."""


class FakeProvider(LocalHTTPServer):
    """A scripted OpenAI-compatible server: records every request; answers from
    ``script`` (a list of ``(status, headers, body)``) first, then with ``answer(body)``."""

    def __init__(self):
        self.requests = []
        self.script = []
        self.answers = {}  # model -> answer text
        self.lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                with provider.lock:
                    provider.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)}
                    )
                    scripted = provider.script.pop(0) if provider.script else None
                if scripted is None:
                    body = json.loads(raw)
                    text = provider.answers.get(body["model"], "I have no idea.")
                    scripted = (200, {}, _completion(body["model"], text))
                status, headers, payload = scripted
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.serve(Handler)
        self.start()
        self.base_url = f"{self.url}/v1"


def _completion(model, text):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }


@pytest.fixture
def provider():
    server = FakeProvider()
    yield server
    server.close()


def settings_for(provider, **overrides):
    values = {
        "base_url": provider.base_url,
        "api_key": API_KEY,
        "models": ("model-a",),
        "timeout": 10.0,
        "max_retries": 3,
        "retry_max_wait": 30.0,
        "concurrency": 2,
    }
    values.update(overrides)
    return LlmSettings(**values)


class Sleeps(list):
    """Records the waits the client asks for instead of sleeping."""

    def __call__(self, seconds):
        self.append(seconds)


# The client -------------------------------------------------------------------------------


def test_request_shape_and_bearer_header(provider):
    provider.answers["model-a"] = "Try the Falcon mug."
    client = ChatClient(settings_for(provider))
    assert client.complete("model-a", "Which mug?") == "Try the Falcon mug."
    (request,) = provider.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {API_KEY}"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["body"] == {
        "model": "model-a",
        "messages": [{"role": "user", "content": "Which mug?"}],
    }


def test_no_authorization_header_without_a_key(provider):
    ChatClient(settings_for(provider, api_key=None)).complete("model-a", "Hi")
    assert "Authorization" not in provider.requests[0]["headers"]


def test_429_is_retried_honouring_retry_after(provider):
    provider.script = [
        (429, {"Retry-After": "2"}, {"error": {"message": "slow down"}}),
        (429, {"Retry-After": "0"}, {"error": {"message": "slow down"}}),
    ]
    provider.answers["model-a"] = "Fine."
    sleeps = Sleeps()
    client = ChatClient(settings_for(provider), sleep=sleeps)
    assert client.complete("model-a", "Hi") == "Fine."
    assert len(provider.requests) == 3
    assert sleeps == [2.0, 0.0]


def test_5xx_and_bad_answers_are_retried_with_backoff_then_give_up(provider):
    provider.script = [(503, {}, {"error": "down"}), (200, {}, b"<html>proxy</html>")]
    provider.answers["model-a"] = "Fine."
    sleeps = Sleeps()
    client = ChatClient(settings_for(provider), sleep=sleeps)
    assert client.complete("model-a", "Hi") == "Fine."
    assert len(sleeps) == 2 and 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0

    provider.requests.clear()
    provider.script = [(500, {}, {"error": "boom"})] * 4
    with pytest.raises(LlmUnavailable) as failure:
        ChatClient(settings_for(provider), sleep=Sleeps()).complete("model-a", "Hi")
    assert len(provider.requests) == 4  # the first try and max_retries=3
    assert failure.value.status == 500 and failure.value.attempts == 4


def test_a_retry_after_beyond_the_bound_gives_up_at_once(provider):
    provider.script = [(429, {"Retry-After": "3600"}, {})]
    sleeps = Sleeps()
    with pytest.raises(LlmUnavailable, match="Retry-After"):
        ChatClient(settings_for(provider), sleep=sleeps).complete("model-a", "Hi")
    assert sleeps == [] and len(provider.requests) == 1


def test_other_4xx_are_not_retried(provider):
    provider.script = [(404, {}, {"error": {"message": "model not found"}})]
    with pytest.raises(LlmRejected) as failure:
        ChatClient(settings_for(provider), sleep=Sleeps()).complete("nope", "Hi")
    assert failure.value.status == 404 and "HTTP 404" in str(failure.value)
    assert "model not found" not in str(failure.value)  # logged, never in the job's error
    assert len(provider.requests) == 1


def test_requests_never_outlast_the_deadline(provider):
    now = [1000.0]
    client = ChatClient(settings_for(provider), sleep=Sleeps(), clock=lambda: now[0])
    with pytest.raises(LlmOutOfTime):
        client.complete("model-a", "Hi", deadline=1000.5)
    assert provider.requests == []
    # a retry that would wait past the deadline is not made
    provider.script = [(429, {"Retry-After": "20"}, {})]
    with pytest.raises(LlmOutOfTime):
        client.complete("model-a", "Hi", deadline=1010.0)
    assert len(provider.requests) == 1


def test_the_read_timeout_is_cut_to_the_deadline(provider, monkeypatch):
    now = [0.0]
    client = ChatClient(settings_for(provider, timeout=60.0), clock=lambda: now[0])
    seen = {}
    session = client._session()
    original = session.post

    def post(url, **kwargs):
        seen.update(kwargs)
        return original(url, **kwargs)

    monkeypatch.setattr(session, "post", post)
    client.complete("model-a", "Hi", deadline=12.0)
    assert seen["timeout"] == (5.0, 12.0)
    client.complete("model-a", "Hi")
    assert seen["timeout"] == (5.0, 60.0)


def test_the_client_needs_a_base_url():
    with pytest.raises(LlmNotConfigured) as failure:
        ChatClient(LlmSettings(base_url=None, api_key=None, models=()))
    for name in ("COMMERCE_LLM_BASE_URL", "COMMERCE_LLM_API_KEY", "COMMERCE_LLM_MODELS"):
        assert name in str(failure.value)


# Mention detection and the score ------------------------------------------------------------


def test_list_answers_are_cut_into_ranked_items():
    units = answer_units(LIST_ANSWER)
    assert [unit.rank for unit in units] == [None, 1, 2, 3, 4, None]
    assert units[0].heading is True  # "Here are some great options:" introduces the list
    assert units[3].text.endswith("Dishwasher safe")  # an item's nested lines belong to it
    bullets = answer_units("Top picks:\n- Alpha mug\n  - sub point\n- Beta mug\n")
    assert [(unit.text, unit.rank) for unit in bullets] == [
        ("Top picks:", None),
        ("Alpha mug sub point", 1),
        ("Beta mug", 2),
    ]


def matcher_of(*titles, brand=None, gtins=()):
    gtins = list(gtins) + [None] * (len(titles) - len(gtins))
    return CatalogueMatcher(
        [
            Product(f"SKU-{n}", title, gtin)
            for n, (title, gtin) in enumerate(zip(titles, gtins, strict=True))
        ],
        brand,
    )


def test_mention_by_title_with_its_position():
    # with the shop's brand ("Falcon" here), the words that single the product out
    found = detect_mention(LIST_ANSWER, matcher_of(MUG_TITLE, brand="Falcon"), "SKU-0")
    assert found["mentioned"] and found["match"] == "title"
    assert found["position"] == 3
    assert "Falcon Enamel Camping Mug" in found["excerpt"]
    # plurals fold; without a brand three of its words and most of its title are needed
    assert matcher_of(MUG_TITLE).identify("Enamel camping mugs, white", False) == {"SKU-0": "title"}
    assert matcher_of(MUG_TITLE).identify("A white mug", False) == {}


def test_a_generic_title_said_of_another_brand_is_not_ours():
    matcher = matcher_of(MUG_TITLE, brand="Hearth & Hollow")
    assert detect_mention(LIST_ANSWER, matcher, "SKU-0")["mentioned"] is False
    answer = "1. Hearth & Hollow enamel camping mug, white\n2. Falcon enamel camping mug\n"
    found = detect_mention(answer, matcher, "SKU-0")
    assert (found["match"], found["position"]) == ("title", 1)


def test_mention_by_gtin_and_by_sku_and_never_by_the_brand_alone():
    answer = "1. Alpha mug\n2. Bravo cup (EAN 4006381 333931)\n"
    found = detect_mention(answer, matcher_of("Mug", gtins=[MUG_GTIN]), "SKU-0")
    assert (found["match"], found["position"]) == ("gtin", 2)
    found = detect_mention("Order sku-0 today.", matcher_of("Mug"), "SKU-0")
    assert found["match"] == "sku" and found["position"] is None
    # the case: an answer about the mug names the brand, not the pen
    matcher = matcher_of("Enamel mug, white, 350 ml", "Brass ballpoint pen", brand="Demo")
    answer = "1. Snow Peak mug\n2. Demo enamel mug, white - 350 ml\n"
    mug, pen = (detect_mention(answer, matcher, sku) for sku in ("SKU-0", "SKU-1"))
    assert mug["mentioned"] and mug["position"] == 2
    assert pen["mentioned"] is False and pen["brand_mentioned"] is True
    # the brand with a kind of product only names no SKU either
    two = matcher_of("Enamel mug, white", "Enamel mug, blue", brand="Demo")
    assert two.identify("Demo enamel mug", True) == {}
    assert two.identify("Demo enamel mug, blue", True) == {"SKU-1": "title"}


def test_an_exact_full_title_names_its_product_with_or_without_the_brand():
    matcher = matcher_of(
        "Oiled oak chopping board 45 x 30 cm with juice groove",
        "Oiled oak chopping board 30 x 20 cm",
        "Brass ballpoint pen",
        brand="Birchwood",
    )
    text = "The Oiled Oak Chopping Board, 30 x 20 cm is the handy size."
    assert matcher.identify(text, False) == {"SKU-1": "title"}
    # the longer title found in the same place: not the shorter one inside it
    assert matcher.identify("oiled oak chopping board 45 x 30 cm with juice groove", False) == {
        "SKU-0": "title"
    }
    # out of order or cut short, it is a description, not the title
    assert matcher.identify("An oiled oak chopping board of about 30 x 20 cm.", False) == {}
    # a short title is the name of a kind: said of another brand, it is not ours
    assert matcher.identify("Kaweco's brass ballpoint pen is a classic.", False) == {}


def test_the_brand_with_any_of_a_kind_or_another_product_of_the_brand_names_no_sku():
    matcher = matcher_of(
        "Enamel cup, 250 ml",
        "Insulated coffee tumbler, 450 ml",
        "Canvas weekender bag",
        brand="Falcon",
    )
    assert matcher.identify("Falcon enamel cup, 250 ml", True) == {"SKU-0": "title"}
    assert matcher.identify("Any enamel cup from Falcon will do.", True) == {}
    assert matcher.identify("Whichever Falcon enamel cup you pick, it lasts.", True) == {}
    # the brand's flask shares two words with our tumbler, but is no tumbler
    assert matcher.identify("Falcon Insulated Coffee Flask, 500 ml", True) == {}
    assert matcher.identify("Falcon's insulated coffee tumbler", True) == {"SKU-1": "title"}
    # another product of the brand, named in capitals with a word our title lacks
    assert matcher.identify("Falcon Canvas Tote Bag - roomy.", True) == {}
    assert matcher.identify("Falcon Canvas Weekender Bag - roomy.", True) == {"SKU-2": "title"}


def test_a_colour_our_title_lacks_is_another_variant():
    matcher = matcher_of("Enamel camping mug with steel rim, green", brand="Falcon")
    assert matcher.identify("The Falcon enamel camping mug in white", True) == {}
    assert matcher.identify("The Falcon enamel camping mug in green", True) == {"SKU-0": "title"}


def test_a_prose_mention_has_no_position():
    found = detect_mention(
        "Hearth makes good mugs. I would pick their enamel camping mug in white.",
        matcher_of(MUG_TITLE, brand="Hearth"),
        "SKU-0",
    )
    assert found["mentioned"] and found["position"] is None


def test_not_mentioned():
    found = detect_mention(LIST_ANSWER, matcher_of("Linen tea towel, natural"), "SKU-0")
    assert found == {
        "mentioned": False,
        "position": None,
        "excerpt": None,
        "match": None,
        "visibility": 0.0,
        "brand_mentioned": False,
    }


def test_position_adjusted_word_count_follows_the_geo_paper():
    units = ["a b c d", "e f", "g h i j k l"]  # 4 + 2 + 6 = 12 words
    assert position_adjusted_visibility(units, [0]) == pytest.approx(4 / 12)
    assert position_adjusted_visibility(units, [2]) == pytest.approx(6 * math.exp(-2 / 3) / 12)
    both = (2 * math.exp(-1 / 3) + 6 * math.exp(-2 / 3)) / 12
    assert position_adjusted_visibility(units, [1, 2]) == pytest.approx(both)
    # the same unit earns less the later it comes
    late = ["x", "y", "a b c d"]
    early = ["a b c d", "x", "y"]
    assert position_adjusted_visibility(early, [0]) > position_adjusted_visibility(late, [2])


def test_queries_are_built_from_title_and_category():
    queries = build_queries(MUG_TITLE, "Kitchen")
    assert len(queries) == 3
    assert all("enamel camping mug" in q for q in queries)
    assert "kitchen" in queries[2]
    assert "brands" in build_queries("FREE SHIPPING Steel bottle - 750 ml", None)[2]
    assert "free" not in build_queries("FREE SHIPPING Steel bottle", None)[0].lower()


# The job through HTTP and the worker ------------------------------------------------------


@pytest.fixture
def llm_app(jobs_app, provider, monkeypatch):  # noqa: F811
    """The app with the worker settings of the job tests and the fake provider."""
    monkeypatch.setitem(jobs_app.config, "LLM_BASE_URL", provider.base_url)
    monkeypatch.setitem(jobs_app.config, "LLM_API_KEY", API_KEY)
    monkeypatch.setitem(jobs_app.config, "LLM_MODELS", "model-a,model-b")
    monkeypatch.setitem(jobs_app.config, "LLM_RETRY_MAX_WAIT_SECONDS", 0.0)
    return jobs_app


def test_the_job_scores_visibility(client, headers, llm_app, provider):
    create_product(client, headers, sku="MUG-1", title=MUG_TITLE, category="kitchen")
    provider.answers = {"model-a": LIST_ANSWER, "model-b": "1. Snow Peak mug\n2. GSI cup\n"}
    # the shop's brand is "Falcon" here: LIST_ANSWER's third item names its mug
    job = dispatch(
        client, headers, "llm_visibility_score", {"skus": ["MUG-1", "NOPE"], "brand": "Falcon"}
    )
    run_worker(llm_app)
    body = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert body["status"] == "completed", body
    assert body["progress"] == {"done": 6, "total": 6}  # 3 queries x 2 assistants
    result = body["result"]
    LlmVisibilityScoreResult().load(result, unknown=ma.RAISE)  # as the document shows it
    assert len(provider.requests) == 6
    asked = {(r["body"]["model"], r["body"]["messages"][0]["content"]) for r in provider.requests}
    assert {model for model, _ in asked} == {"model-a", "model-b"}
    assert all("enamel camping mug" in query for _, query in asked)
    assert all(r["headers"]["Authorization"] == f"Bearer {API_KEY}" for r in provider.requests)

    units = [unit.text for unit in answer_units(LIST_ANSWER)]
    expected = position_adjusted_visibility(units, [3])
    assert result["mention_rate"] == 0.5
    assert result["average_position"] == 3
    assert result["score"] == round(100 * expected / 2, 1)
    assert result["skus_not_found"] == ["NOPE"]
    by_assistant = {entry["assistant"]: entry for entry in result["by_assistant"]}
    assert by_assistant["model-a"]["mention_rate"] == 1.0
    assert by_assistant["model-a"]["average_position"] == 3
    assert by_assistant["model-b"]["mention_rate"] == 0.0
    assert by_assistant["model-b"]["average_position"] is None
    assert (
        by_assistant["model-a"]["brand_mentions"] == by_assistant["model-b"]["brand_mentions"] == 0
    )
    (sku,) = result["by_sku"]
    assert sku["sku"] == "MUG-1" and sku["score"] == result["score"]
    assert len(sku["mentions"]) == 6
    for mention in sku["mentions"]:
        assert {"assistant", "query", "mentioned", "position", "excerpt"} <= set(mention)
        assert mention["mentioned"] == (mention["assistant"] == "model-a")


def test_a_brand_mention_is_never_credited_to_another_sku(client, headers, llm_app, provider):
    # the issue: answers name only the mug; the pen used to score 15.2 "at position 2"
    create_product(client, headers, sku="MUG-ENAMEL-WHT", title="Enamel mug, white, 350 ml")
    create_product(client, headers, sku="MUG-ENAMEL-BLU", title="Enamel mug, blue, 350 ml")
    create_product(client, headers, sku="PEN-BRASS", title="Brass ballpoint pen")
    answer = "1. Snow Peak mug\n2. Demo enamel mug, white - 350 ml\n3. Falcon mug\n"
    provider.answers = {"model-a": answer, "model-b": answer}
    job = dispatch(
        client,
        headers,
        "llm_visibility_score",
        {"skus": ["MUG-ENAMEL-WHT", "PEN-BRASS"], "brand": "Demo", "queries": ["Best?"]},
    )
    run_worker(llm_app)
    result = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]["result"]
    by_sku = {entry["sku"]: entry for entry in result["by_sku"]}
    assert by_sku["MUG-ENAMEL-WHT"]["mention_rate"] == 1.0
    assert {m["position"] for m in by_sku["MUG-ENAMEL-WHT"]["mentions"]} == {2}
    pen = by_sku["PEN-BRASS"]
    assert pen["score"] == 0.0 and pen["mention_rate"] == 0.0
    assert all(m["match"] is None and m["excerpt"] is None for m in pen["mentions"])
    # the brand was named in the pen's answers: counted per assistant, credited to no SKU
    assert [a["brand_mentions"] for a in result["by_assistant"]] == [1, 1]


def test_an_exact_title_is_credited_without_the_brand_and_any_of_the_brand_is_not(
    client, headers, llm_app, provider
):
    create_product(client, headers, sku="BOARD-S", title="Oiled oak chopping board 30 x 20 cm")
    create_product(client, headers, sku="CUP-1", title="Enamel cup, 250 ml")
    provider.answers = {
        "model-a": "1. John Boos maple board\n2. Oiled Oak Chopping Board 30 x 20 cm\n",
        "model-b": "Any enamel cup or board from Birchwood will do.",
    }
    job = dispatch(
        client,
        headers,
        "llm_visibility_score",
        {"skus": ["BOARD-S", "CUP-1"], "brand": "Birchwood", "queries": ["Best?"]},
    )
    run_worker(llm_app)
    result = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]["result"]
    by_sku = {entry["sku"]: entry for entry in result["by_sku"]}
    board = {m["assistant"]: m for m in by_sku["BOARD-S"]["mentions"]}
    assert (board["model-a"]["mentioned"], board["model-a"]["position"]) == (True, 2)
    assert board["model-b"]["mentioned"] is False
    assert by_sku["CUP-1"]["mention_rate"] == 0.0
    by_assistant = {entry["assistant"]: entry for entry in result["by_assistant"]}
    assert by_assistant["model-b"]["brand_mentions"] == 2  # named, credited to no SKU


def test_the_job_retries_429_within_the_attempt(client, headers, llm_app, provider, monkeypatch):
    monkeypatch.setitem(llm_app.config, "LLM_MODELS", "model-a")
    create_product(client, headers, sku="MUG-1", title=MUG_TITLE, category="kitchen")
    provider.script = [(429, {"Retry-After": "0"}, {})] * 2
    provider.answers = {"model-a": LIST_ANSWER}
    job = dispatch(
        client,
        headers,
        "llm_visibility_score",
        {"skus": ["MUG-1"], "queries": ["Best {title}?"], "brand": "Falcon"},
    )
    run_worker(llm_app)
    row = Job.get_by_id(job["id"])
    assert row.status == "completed" and row.attempts == 1
    assert len(provider.requests) == 3
    assert provider.requests[-1]["body"]["messages"][0]["content"] == f"Best {MUG_TITLE}?"
    assert row.result["by_sku"][0]["mentions"][0]["position"] == 3


def test_a_provider_that_refuses_fails_the_job_without_retries(
    client, headers, llm_app, provider, monkeypatch
):
    monkeypatch.setitem(llm_app.config, "LLM_MODELS", "model-a")
    create_product(client, headers, sku="MUG-1", title=MUG_TITLE)
    provider.script = [(401, {}, {"error": {"message": "bad key"}})] * 3
    job = dispatch(client, headers, "llm_visibility_score", {"skus": ["MUG-1"]})
    run_worker(llm_app)
    body = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert body["status"] == "failed"
    assert body["error"]["code"] == "LLM_REQUEST_REJECTED"
    assert body["error"]["retry_count"] == 0


def test_unconfigured_is_refused_at_dispatch_naming_the_variables(
    client, headers, llm_app, provider, monkeypatch
):
    monkeypatch.setitem(llm_app.config, "LLM_BASE_URL", None)
    monkeypatch.setitem(llm_app.config, "LLM_MODELS", "model-a")
    create_product(client, headers, sku="MUG-1", title=MUG_TITLE)
    before = Job.select().count()
    body = dispatch(client, headers, "llm_visibility_score", {"skus": ["MUG-1"]}, status=422)
    assert body["error"]["code"] == "LLM_NOT_CONFIGURED"
    for name in ("COMMERCE_LLM_BASE_URL", "COMMERCE_LLM_API_KEY", "COMMERCE_LLM_MODELS"):
        assert name in body["error"]["message"]
    assert body["error"]["details"]["variables"] == [
        "COMMERCE_LLM_BASE_URL",
        "COMMERCE_LLM_API_KEY",
        "COMMERCE_LLM_MODELS",
    ]
    # in a batch too; nothing of the batch is queued
    batch = client.post(
        "/api/ai-jobs/batch",
        headers=headers,
        json={
            "jobs": [
                {"type": "listing_optimize", "params": {"skus": ["MUG-1"]}},
                {"type": "llm_visibility_score", "params": {"skus": ["MUG-1"]}},
            ]
        },
    )
    assert batch.status_code == 422 and batch.get_json()["error"]["code"] == "LLM_NOT_CONFIGURED"
    # bad params are still a VALIDATION_ERROR first
    bad = dispatch(client, headers, "llm_visibility_score", {"skus": []}, status=422)
    assert bad["error"]["code"] == "VALIDATION_ERROR"
    # a base URL without any model is not configured either; one in `assistants` is enough
    monkeypatch.setitem(llm_app.config, "LLM_BASE_URL", provider.base_url)
    monkeypatch.setitem(llm_app.config, "LLM_MODELS", "")
    body = dispatch(client, headers, "llm_visibility_score", {"skus": ["MUG-1"]}, status=422)
    assert body["error"]["code"] == "LLM_NOT_CONFIGURED"
    assert Job.select().count() == before
    dispatch(client, headers, "llm_visibility_score", {"skus": ["MUG-1"], "assistants": ["m"]})
    assert provider.requests == []


def test_a_job_queued_before_the_provider_was_removed_fails_at_once(
    client, headers, llm_app, provider, monkeypatch
):
    monkeypatch.setitem(llm_app.config, "LLM_MODELS", "model-a")
    create_product(client, headers, sku="MUG-1", title=MUG_TITLE)
    job = dispatch(client, headers, "llm_visibility_score", {"skus": ["MUG-1"]})
    monkeypatch.setitem(llm_app.config, "LLM_BASE_URL", None)
    run_worker(llm_app)
    body = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert body["status"] == "failed"
    assert body["error"]["code"] == "LLM_NOT_CONFIGURED"
    assert body["error"]["retry_count"] == 0 and body["attempts"] == 1
    assert "COMMERCE_LLM_BASE_URL" in body["error"]["message"]
    assert provider.requests == []


@pytest.mark.parametrize(
    "params, field",
    [
        ({}, "skus"),
        ({"skus": ["MUG-1"], "queries": []}, "queries"),
        ({"skus": ["MUG-1"], "queries": ["  "]}, "queries"),
        ({"skus": ["MUG-1"], "assistants": "model-a"}, "assistants"),
        ({"skus": ["MUG-1"], "brand": ""}, "brand"),
        ({"skus": ["MUG-1"], "model": "x"}, "model"),
        (
            {"skus": [f"S-{i}" for i in range(100)], "assistants": [f"m{i}" for i in range(7)]},
            "skus",
        ),
    ],
)
def test_bad_params_are_refused_and_nothing_is_queued(client, headers, params, field):
    before = Job.select().count()
    body = dispatch(client, headers, "llm_visibility_score", params, status=422)
    assert body["error"]["code"] == "VALIDATION_ERROR"
    assert field in body["error"]["details"]["fields"]["params"]
    assert Job.select().count() == before


# The base URL as configured, and nothing of the provider's in the tenant's job ------------


def test_a_refusing_providers_body_stays_out_of_the_job_error(
    client, headers, llm_app, provider, monkeypatch
):
    monkeypatch.setitem(llm_app.config, "LLM_MODELS", "model-a")
    create_product(client, headers, sku="MUG-1", title=MUG_TITLE)
    leak = {"error": {"message": "key sk-live-SECRET of org internal-billing is over quota"}}
    provider.script = [(403, {}, leak)]
    job = dispatch(client, headers, "llm_visibility_score", {"skus": ["MUG-1"]})
    run_worker(llm_app)
    body = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert body["error"]["code"] == "LLM_REQUEST_REJECTED"
    assert "HTTP 403" in body["error"]["message"]
    assert "SECRET" not in json.dumps(body) and "internal-billing" not in json.dumps(body)


def test_redirects_are_not_followed(client, headers, llm_app, provider, monkeypatch):
    monkeypatch.setitem(llm_app.config, "LLM_MODELS", "model-a")
    create_product(client, headers, sku="MUG-1", title=MUG_TITLE)
    provider.script = [(307, {"Location": f"{provider.url}/elsewhere"}, {})] * 3
    job = dispatch(client, headers, "llm_visibility_score", {"skus": ["MUG-1"]})
    run_worker(llm_app)
    assert {request["path"] for request in provider.requests} == {"/v1/chat/completions"}
    body = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert body["error"]["code"] == "LLM_REQUEST_REJECTED"
    assert "redirects are not followed" in body["error"]["message"]


def test_proxy_variables_are_ignored(provider, monkeypatch):
    from tests.support.servers import free_port

    # a proxy that is not there: a client honouring it could not reach the provider
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{free_port()}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    provider.answers = {"model-a": "hello"}
    client = ChatClient(settings_for(provider, max_retries=0))
    assert client.complete("model-a", "hi") == "hello"
    assert len(provider.requests) == 1
