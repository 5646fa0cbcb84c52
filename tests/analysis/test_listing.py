"""listing_optimize: every issue code, the proposed title (hypothesis), keyword suggestions,
and the job through HTTP and the in-process worker."""

from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commerce_api.analysis.listing import field_issues, propose, score, signal_issues
from commerce_api.analysis.listing_keywords import KeywordCorpus
from commerce_api.analysis.listing_profiles import DEFAULT_PROFILE, PROFILES, profile_for
from commerce_api.analysis.listing_title import propose_title, title_issues
from commerce_api.auth.models import Tenant
from commerce_api.demo import seed_demo
from commerce_api.jobs.models import Job
from commerce_api.orders.ingest import upsert_order
from tests.support.factories import auth_headers, create_product
from tests.support.jobs_support import dispatch, jobs_app, run_worker  # noqa: F401
from tests.support.orders_support import order_body

GOOD = {
    "sku": "MUG-GOOD",
    "title": "Enamel camping mug, white, 350 ml, stainless steel rim",
    "description": "A sturdy enamel mug with a stainless steel rim. " * 4,
    "images": [f"https://img.example.com/mug-{i}.jpg" for i in range(5)],
    "gtin": "4006381333931",
    "category": "kitchen",
}
TITLE_CODES = {
    "TITLE_TOO_SHORT",
    "TITLE_TOO_LONG",
    "TITLE_ALL_CAPS",
    "TITLE_PROMOTIONAL",
    "TITLE_REPEATED_WORD",
}


def product(**overrides):
    return SimpleNamespace(**{**GOOD, **overrides})


def codes(issues):
    return [issue["code"] for issue in issues]


def issue_of(issues, code):
    return next(issue for issue in issues if issue["code"] == code)


# Every issue code ------------------------------------------------------------------------


def test_a_good_listing_has_no_issue_and_scores_100():
    issues = field_issues(product(), DEFAULT_PROFILE)
    assert issues == []
    assert score(issues) == 100
    assert title_issues(GOOD["title"], profile_for("amazon")) == []


def test_title_too_short():
    issues = field_issues(product(title="Mug"), DEFAULT_PROFILE)
    assert codes(issues) == ["TITLE_TOO_SHORT"]
    assert issues[0]["field"] == "title" and issues[0]["severity"] == "warning"
    assert "3 characters" in issues[0]["message"]


def test_title_too_long_depends_on_the_marketplace():
    title = "Enamel camping mug with stainless steel rim for coffee, tea and soup, 350 ml white"
    assert 80 < len(title) <= 150
    assert codes(field_issues(product(title=title), profile_for("ebay"))) == ["TITLE_TOO_LONG"]
    assert field_issues(product(title=title), profile_for("amazon_us")) == []
    assert field_issues(product(title=title), DEFAULT_PROFILE) == []


def test_title_all_caps():
    assert "TITLE_ALL_CAPS" in codes(
        field_issues(product(title="ENAMEL CAMPING MUG WHITE 350 ML"), DEFAULT_PROFILE)
    )
    assert "TITLE_ALL_CAPS" in codes(
        field_issues(product(title="Enamel camping mug, STAINLESS rim, 350 ml"), DEFAULT_PROFILE)
    )
    # acronyms and sizes are not shouting
    assert (
        field_issues(product(title="USB-C LED desk lamp, HDMI hub, XL base"), DEFAULT_PROFILE) == []
    )


def test_title_promotional_words_and_symbols():
    for title in (
        "Enamel camping mug - Free shipping - white",
        "Best seller enamel camping mug, white 350 ml",
        "Enamel camping mug white 350 ml 50% off",
        "Enamel camping mug, white, 350 ml!!",
        "#1 Enamel camping mug, white, 350 ml",
        "Enamel camping mug \u2605 white 350 ml",
    ):
        issues = field_issues(product(title=title), DEFAULT_PROFILE)
        assert codes(issues) == ["TITLE_PROMOTIONAL"], title
    # Amazon suppresses such listings: an error there
    issues = field_issues(product(title="Enamel camping mug on sale, white"), profile_for("amazon"))
    assert issue_of(issues, "TITLE_PROMOTIONAL")["severity"] == "error"
    # "100% cotton" is not promotional
    assert field_issues(product(title="Tea towel, 100% cotton, 50 x 70 cm"), DEFAULT_PROFILE) == []


def test_title_repeated_word():
    issues = field_issues(product(title="Enamel mug mug, camping mug, white"), DEFAULT_PROFILE)
    assert codes(issues) == ["TITLE_REPEATED_WORD"]
    assert "mug" in issues[0]["message"]
    # twice is fine on Amazon, not on eBay
    title = "Steel water bottle with steel lid, 750 ml"
    assert title_issues(title, profile_for("amazon")) == []
    assert [c for c, _ in title_issues(title, profile_for("ebay"))] == ["TITLE_REPEATED_WORD"]


def test_description_missing_and_too_short():
    assert codes(field_issues(product(description=None), DEFAULT_PROFILE)) == [
        "DESCRIPTION_MISSING"
    ]
    assert codes(field_issues(product(description="   "), DEFAULT_PROFILE)) == [
        "DESCRIPTION_MISSING"
    ]
    issues = field_issues(product(description="A mug."), DEFAULT_PROFILE)
    assert codes(issues) == ["DESCRIPTION_TOO_SHORT"]
    assert issues[0]["field"] == "description"


def test_images_missing_too_few_and_not_https():
    assert codes(field_issues(product(images=[]), DEFAULT_PROFILE)) == ["IMAGES_MISSING"]
    two = ["https://img.example.com/a.jpg", "https://img.example.com/b.jpg"]
    assert codes(field_issues(product(images=two), DEFAULT_PROFILE)) == ["IMAGES_TOO_FEW"]
    assert field_issues(product(images=[*two, two[0]]), DEFAULT_PROFILE) == []
    assert codes(field_issues(product(images=[*two, two[0]]), profile_for("amazon"))) == [
        "IMAGES_TOO_FEW"
    ]
    images = [*GOOD["images"][:3], "http://img.example.com/c.jpg"]
    issues = field_issues(product(images=images), DEFAULT_PROFILE)
    assert codes(issues) == ["IMAGE_NOT_HTTPS"]
    assert issues[0]["field"] == "images[3]"


def test_gtin_missing_is_an_error_where_required():
    issues = field_issues(product(gtin=None), DEFAULT_PROFILE)
    assert codes(issues) == ["GTIN_MISSING"] and issues[0]["severity"] == "warning"
    assert (
        issue_of(field_issues(product(gtin=""), profile_for("walmart")), "GTIN_MISSING")["severity"]
        == "error"
    )
    assert (
        issue_of(field_issues(product(gtin=None), profile_for("etsy")), "GTIN_MISSING")["severity"]
        == "info"
    )


def test_category_missing():
    issues = field_issues(product(category=None), DEFAULT_PROFILE)
    assert codes(issues) == ["CATEGORY_MISSING"] and issues[0]["field"] == "category"


def test_size_chart_suggested_from_size_fit_returns():
    returns = {"units_sold": 40, "units_returned": 6, "categories": {"size_fit": 4, "other": 2}}
    issues = signal_issues(DEFAULT_PROFILE, returns=returns)
    assert codes(issues) == ["SIZE_CHART_SUGGESTED"]
    assert issues[0]["evidence"] == {"returns": 4, "returns_total": 6}
    # one size return is not enough evidence, nor two among many other returns
    one = {"units_sold": 40, "units_returned": 1, "categories": {"size_fit": 1}}
    assert signal_issues(DEFAULT_PROFILE, returns=one) == []
    few = {"units_sold": 90, "units_returned": 9, "categories": {"size_fit": 2, "other": 7}}
    assert signal_issues(DEFAULT_PROFILE, returns=few) == []


def test_size_chart_suggested_from_negative_size_reviews():
    reviews = {
        "review_count": 10,
        "average_score": 0.2,
        "aspects": {"size_fit": {"mentions": 4, "average_score": -0.5}},
    }
    assert codes(signal_issues(DEFAULT_PROFILE, reviews=reviews)) == ["SIZE_CHART_SUGGESTED"]


def test_description_mismatch_box_contents_and_negative_reviews():
    returns = {
        "units_sold": 50,
        "units_returned": 10,
        "categories": {"not_as_described": 4, "missing_parts": 3, "changed_mind": 3},
    }
    assert codes(signal_issues(DEFAULT_PROFILE, returns=returns)) == [
        "DESCRIPTION_MISMATCH",
        "BOX_CONTENTS_SUGGESTED",
    ]
    reviews = {
        "review_count": 8,
        "average_score": -0.4,
        "aspects": {
            "quality": {"mentions": 5, "average_score": -0.6},
            "description": {"mentions": 3, "average_score": -0.3},
        },
    }
    issues = signal_issues(DEFAULT_PROFILE, reviews=reviews)
    assert codes(issues) == ["DESCRIPTION_MISMATCH", "REVIEWS_NEGATIVE"]
    assert "quality" in issue_of(issues, "REVIEWS_NEGATIVE")["message"]
    # positive reviews raise nothing
    happy = {"review_count": 8, "average_score": 0.6, "aspects": {}}
    assert signal_issues(DEFAULT_PROFILE, reviews=happy) == []
    # poor stars alone are negative too, from three reviews on
    stars = {"review_count": 3, "average_score": 0.2, "average_rating": 2.0, "aspects": {}}
    assert codes(signal_issues(DEFAULT_PROFILE, reviews=stars)) == ["REVIEWS_NEGATIVE"]
    assert signal_issues(DEFAULT_PROFILE, reviews={**stars, "review_count": 2}) == []


def test_defective_returns_raise_returns_high_defect():
    # the issue's blue mug: a third of what was sold came back defective
    returns = {"units_sold": 45, "units_returned": 17, "categories": {"defective": 15}}
    issues = signal_issues(DEFAULT_PROFILE, returns=returns)
    assert codes(issues) == ["RETURNS_HIGH_DEFECT"]
    issue = issues[0]
    assert issue["severity"] == "error" and "15 of 45" in issue["message"]
    assert issue["evidence"] == {
        "defective_returns": 15,
        "units_sold": 45,
        "defect_rate": 0.3333,
        "returns_total": 15,
    }
    # one defective return, or a rate under 5 %, is no pattern
    assert signal_issues(DEFAULT_PROFILE, returns={**returns, "categories": {"defective": 1}}) == []
    common = {"units_sold": 200, "units_returned": 9, "categories": {"defective": 9}}
    assert signal_issues(DEFAULT_PROFILE, returns=common) == []


def test_score_counts_each_code_once_by_severity():
    images = ["http://a.example/1.jpg", "http://a.example/2.jpg", "http://a.example/3.jpg"]
    issues = field_issues(product(images=images, description=None), DEFAULT_PROFILE)
    assert codes(issues).count("IMAGE_NOT_HTTPS") == 3
    assert score(issues) == 100 - 20 - 8  # DESCRIPTION_MISSING error, IMAGE_NOT_HTTPS once
    assert score([{"code": c, "severity": "error"} for c in "ABCDEF"]) == 0


def test_profiles_by_marketplace_family():
    assert profile_for("amazon_de").name == "amazon"
    assert profile_for("eBay-UK").name == "ebay"
    assert profile_for("otto").name == "default"
    assert profile_for(None).name == "default"


# The proposed title ---------------------------------------------------------------------

_WORD_LIST = (
    "mug MUG Mug enamel ENAMEL sale SALE free shipping FREE #1 50% off !!! \u2605 white "
    "steel bottle steel ß ΣΣΣΣ 350 ml , - and USB-C HDMI cheap best seller deal"
)
_WORDS = st.sampled_from(_WORD_LIST.split())
ARBITRARY_TITLES = st.one_of(
    st.text(max_size=300),
    st.lists(_WORDS, max_size=60).map(" ".join),
    st.lists(st.one_of(_WORDS, st.text(max_size=12)), max_size=40).map(" ".join),
)
CONTEXT = [
    "enamel camping coffee",
    "kitchen",
    "A sturdy enamel mug for camping trips, coffee on the road and the kitchen table.",
]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(title=ARBITRARY_TITLES, name=st.sampled_from(sorted(PROFILES)))
def test_the_proposed_title_raises_no_title_issue(title, name):
    profile = PROFILES[name]
    proposed, _ = propose_title(title, profile, CONTEXT)
    assert proposed is not None
    assert title_issues(proposed, profile) == []


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    title=ARBITRARY_TITLES,
    padding=st.lists(st.text(max_size=80), max_size=3),
    name=st.sampled_from(sorted(PROFILES)),
)
def test_a_proposed_title_from_any_words_is_clean_or_absent(title, padding, name):
    profile = PROFILES[name]
    proposed, _ = propose_title(title, profile, padding)
    if proposed is not None:  # None: the product's own words cannot make a clean title
        assert title_issues(proposed, profile) == []


def test_proposed_title_cleans_a_weak_title():
    proposed, changes = propose_title(
        "BEST SELLER!!! ENAMEL MUG mug - FREE SHIPPING", profile_for("amazon"), CONTEXT
    )
    assert proposed == "Enamel Mug, camping coffee, kitchen"
    assert "removed promotional words" in changes and "removed repeated words" in changes
    assert propose_title("Mug", DEFAULT_PROFILE, ["", "", ""])[0] is None  # nothing to add


def test_the_category_word_is_never_tacked_on_to_a_title():
    # the issue: "Wool blanket, 130 x 170 cm home" and "Enamel mug, blue, 350 ml kitchen"
    amazon = profile_for("amazon")
    for title, category in (
        ("Wool blanket, 130 x 170 cm", "home"),
        ("Enamel mug, blue", "kitchen"),
    ):
        bare = propose(product(title=title, category=category, description=None), amazon)
        assert bare["proposed_title"] is None  # its own words cannot reach 30 characters
        described = propose(
            product(
                title=title,
                category=category,
                description="Soft, warm and heavy. Machine washable at 30 degrees.",
            ),
            amazon,
        )
        proposed = described["proposed_title"]
        assert proposed.startswith(title) and category not in proposed.split()
        assert title_issues(proposed, amazon) == []


# Keyword suggestions ----------------------------------------------------------------------


def test_keywords_from_a_description_are_phrases_it_says_of_the_product():
    corpus = KeywordCorpus(
        [
            ("mats", "Acme Non-Slip Yoga Mat 6 mm, TPE"),
            ("mats", "Acme Non-Slip Yoga Mat 4 mm, Natural Rubber"),
            ("mats", "Acme Extra Thick Yoga Mat, Non-Slip"),
            ("mats", "Acme Travel Yoga Mat, Foldable"),
            ("cups", "Acme Enamel Cup"),
            ("cups", "Acme Steel Cup"),
        ]
    )

    def terms(title, description, included=True):
        found = corpus.suggest("mats", title, included, description=description)
        return [k["term"] for k in found]

    # the phrase, not its parts; the shop's brand in every title is no keyword
    assert terms("Acme Travel Yoga Mat, Foldable", "Acme's non-slip travel mat.") == ["non slip"]
    assert terms("Cork yoga mat", "An Acme non-slip cork mat.", included=False) == ["non slip"]
    # said with a negation, or not said: nothing (common in the category is not true of it)
    assert terms("Acme Travel Yoga Mat, Foldable", "Light, but not non-slip.") == []
    assert terms("Acme Travel Yoga Mat, Foldable", "Folds into a bag.") == []
    # a phrase sharing a word with the title adds nothing to it
    assert terms("Acme Non-Slip Yoga Mat 4 mm, Natural Rubber", "Non-slip natural rubber.") == []


def test_keywords_are_common_in_the_category_and_missing_from_the_title():
    corpus = KeywordCorpus(
        [
            ("kitchen", "Enamel camping mug, blue"),
            ("kitchen", "Enamel mug with lid"),
            ("kitchen", "Stoneware coffee mug"),
            ("kitchen", "Enamel coffee mug, large"),
            ("kitchen", "Mug"),
            ("home", "Soy candle, large"),
            ("home", "Soy candle, small"),
        ]
    )
    terms = [entry["term"] for entry in corpus.suggest("Kitchen", "Mug")]
    assert terms[:2] == ["enamel", "coffee"]
    assert "mug" not in terms and "candle" not in terms and "large" not in terms
    # its own words are never suggested, plurals included
    assert "enamel" not in [e["term"] for e in corpus.suggest("kitchen", "Enamels mug", False)]
    assert corpus.suggest("garden", "Rake") == [] and corpus.suggest(None, "Mug") == []


def test_proposal_carries_keywords_and_title_suggestions():
    keywords = [{"term": "enamel", "score": 0.9, "share": 0.75}]
    weak = product(
        title="Linen tea towel", description="Woven linen, machine washable, 50 x 70 cm."
    )
    proposal = propose(weak, DEFAULT_PROFILE, keywords)
    # the title grows from the product's own words, never from the category's keywords
    assert proposal["proposed_title"] == "Linen tea towel, woven, machine washable"
    kinds = {s["kind"]: s for s in proposal["suggestions"]}
    assert kinds["keywords"]["keywords"] == keywords
    assert "enamel" in kinds["keywords"]["message"]
    assert kinds["title"]["changes"] == ["added descriptive words: woven, machine washable"]


# The job through HTTP and the worker ------------------------------------------------------


def _catalogue(client, headers):
    create_product(
        client,
        headers,
        sku="WEAK-1",
        title="BEST SELLER!!! MUG mug mug",
        description="Mug for camping, coffee and tea.",
        images=["http://img.example.com/weak.jpg"],
        gtin=None,
        category="kitchen",
    )
    for index, title in enumerate(
        ("Enamel camping mug, blue", "Enamel mug with lid", "Enamel coffee mug, large")
    ):
        create_product(client, headers, sku=f"MUG-{index}", title=title, category="kitchen")
    create_product(client, headers, sku="MUG-1X", title="Mug", category="kitchen")


def test_the_job_proposes_improvements_through_http(client, headers, jobs_app):  # noqa: F811
    _catalogue(client, headers)
    job = dispatch(
        client,
        headers,
        "listing_optimize",
        {"skus": ["WEAK-1", "MUG-0", "NOPE"], "marketplace": "amazon_us"},
    )
    run_worker(jobs_app)
    body = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert body["status"] == "completed", body
    assert body["progress"] == {"done": 2, "total": 2}
    result = body["result"]
    assert result["profile"] == "amazon" and result["skus_not_found"] == ["NOPE"]
    weak, good = result["proposals"]
    assert weak["sku"] == "WEAK-1"
    assert set(codes(weak["issues"])) == {
        "TITLE_TOO_SHORT",
        "TITLE_ALL_CAPS",
        "TITLE_PROMOTIONAL",
        "TITLE_REPEATED_WORD",
        "DESCRIPTION_TOO_SHORT",
        "IMAGES_TOO_FEW",
        "IMAGE_NOT_HTTPS",
        "GTIN_MISSING",
    }
    assert weak["score"] < 30 < good["score"]
    # "Mug, camping, coffee and tea" is all its own words make: short of Amazon's 30
    # characters, and the category ("kitchen") is never tacked on to reach them
    assert weak["proposed_title"] is None
    title = next(s for s in weak["suggestions"] if s["kind"] == "title")
    assert title["message"].startswith("No title without issues can be built")
    # most mugs of the category are enamel, but its description does not say it is
    assert [s for s in weak["suggestions"] if s["kind"] == "keywords"] == []
    for issue in weak["issues"]:
        assert set(issue) == {"code", "field", "severity", "message"}


def test_keyword_suggestions_are_what_the_description_says_through_http(
    client,
    headers,
    jobs_app,  # noqa: F811
):
    for sku, title in (
        ("BOTTLE-1", "Stainless steel water bottle, leak-proof, 750 ml"),
        ("BOTTLE-2", "Stainless steel sports bottle, leak-proof"),
        ("BOTTLE-3", "Leak-proof kids bottle, stainless steel, 350 ml"),
    ):
        create_product(client, headers, sku=sku, title=title, category="bottles")
    create_product(
        client,
        headers,
        sku="BOTTLE-GLASS",
        title="Glass water bottle with bamboo lid, 600 ml",
        description="Borosilicate glass in a silicone sleeve, with a leak-proof bamboo lid.",
        category="bottles",
    )
    create_product(
        client,
        headers,
        sku="BOTTLE-VAC",
        title="Vacuum insulated bottle, 1 l",
        description="Double-wall 18/8 stainless steel; the lid is not leak-proof.",
        category="bottles",
    )
    job = dispatch(client, headers, "listing_optimize", {"skus": ["BOTTLE-GLASS", "BOTTLE-VAC"]})
    run_worker(jobs_app)
    body = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]
    assert body["status"] == "completed", body
    terms = {
        p["sku"]: [
            k["term"] for s in p["suggestions"] if s["kind"] == "keywords" for k in s["keywords"]
        ]
        for p in body["result"]["proposals"]
    }
    # glass is never offered "stainless steel"; a lid that is "not leak-proof" is not
    assert terms == {"BOTTLE-GLASS": ["leak proof"], "BOTTLE-VAC": ["stainless steel"]}


def test_the_job_uses_return_signals(client, headers, tenant, jobs_app):  # noqa: F811
    create_product(client, headers, sku="MUG-1", title=GOOD["title"], category="kitchen")
    create_product(client, headers, sku="TOWEL-1", title="Linen tea towel", category="kitchen")
    for n in range(4):
        upsert_order(
            tenant.id,
            order_body(
                f"R-{n}",
                status="delivered",
                returns=[
                    {
                        "sku": "MUG-1",
                        "quantity": 1,
                        "reason": "too_small",
                        "reason_text": "Smaller than I expected",
                        "created_at": "2026-03-20T12:00:00.000Z",
                    }
                ],
            ),
            source="import",
        )
    job = dispatch(client, headers, "listing_optimize", {"skus": ["MUG-1", "TOWEL-1"]})
    run_worker(jobs_app)
    result = Job.get_by_id(job["id"]).result
    mug, towel = result["proposals"]
    size = issue_of(mug["issues"], "SIZE_CHART_SUGGESTED")
    assert size["evidence"] == {"returns": 4, "returns_total": 4}
    assert "SIZE_CHART_SUGGESTED" not in codes(towel["issues"])


@pytest.mark.parametrize(
    "params, field",
    [
        ({}, "skus"),
        ({"skus": []}, "skus"),
        ({"skus": "MUG-1"}, "skus"),
        ({"skus": ["MUG-1"], "marketplace": 7}, "marketplace"),
        ({"skus": ["MUG-1"], "apply": True}, "apply"),
        ({"skus": [f"S-{i}" for i in range(101)]}, "skus"),
    ],
)
def test_bad_params_are_refused_and_nothing_is_queued(client, headers, params, field):
    before = Job.select().count()
    body = dispatch(client, headers, "listing_optimize", params, status=422)
    assert body["error"]["code"] == "VALIDATION_ERROR"
    assert field in body["error"]["details"]["fields"]["params"]
    assert Job.select().count() == before


def test_the_demo_tenant_gets_meaningful_proposals(client, jobs_app, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(jobs_app, "instance_path", str(tmp_path))
    with jobs_app.app_context():
        saved, _ = seed_demo()
    headers = auth_headers(Tenant.get_by_id(saved["tenant_id"]), saved["api_key"])
    job = dispatch(
        client,
        headers,
        "listing_optimize",
        {"skus": ["MUG-ENAMEL-PROMO", "MUG-ENAMEL-CAMP", "BLANKET-WOOL"], "marketplace": "amazon"},
    )
    run_worker(jobs_app)
    result = client.get(f"/api/ai-jobs/{job['id']}", headers=headers).get_json()["data"]["result"]
    weak, good, blanket = result["proposals"]
    assert TITLE_CODES - {"TITLE_TOO_LONG"} <= set(codes(weak["issues"]))
    assert {"DESCRIPTION_TOO_SHORT", "IMAGES_TOO_FEW", "IMAGE_NOT_HTTPS"} <= set(
        codes(weak["issues"])
    )
    assert (
        weak["proposed_title"] and title_issues(weak["proposed_title"], profile_for("amazon")) == []
    )
    keywords = next(s for s in weak["suggestions"] if s["kind"] == "keywords")["keywords"]
    assert "enamel" in [k["term"] for k in keywords]
    assert good["issues"] == [] and good["score"] == 100 > 40 > weak["score"]
    # the demo's orders send the wool blanket back for its size
    assert "SIZE_CHART_SUGGESTED" in codes(blanket["issues"])
