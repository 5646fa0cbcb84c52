"""Driving the console (/console) through Flask's test client: sign in, read a form's CSRF
token, post a form as a browser would."""

import re

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(html: str) -> str:
    match = CSRF.search(html)
    assert match, "the page has no form with a CSRF token"
    return match.group(1)


def sign_in(client, secret: str, follow: bool = False):
    """Open the sign-in page and post the key with the page's CSRF token."""
    page = client.get("/console/sign-in")
    return client.post(
        "/console/sign-in",
        data={"api_key": secret, "csrf_token": csrf_of(page.text)},
        follow_redirects=follow,
    )


def post_form(client, page_path: str, action: str, data: dict | None = None, **kwargs):
    """Post ``data`` to ``action`` with the CSRF token of the page at ``page_path``."""
    page = client.get(page_path)
    assert page.status_code == 200, page.text[:500]
    return client.post(action, data={**(data or {}), "csrf_token": csrf_of(page.text)}, **kwargs)
