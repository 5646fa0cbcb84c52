"""A small OpenID Connect identity provider on 127.0.0.1 for the console's sign-in tests:
discovery, an authorization endpoint that signs the user in at once, a token endpoint that
checks the PKCE verifier and the client's secret, and its JWKS. Tokens are signed with the
test session's RSA key (``jwt_keys``), which the app trusts for user JWTs."""

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlencode, urlparse

import jwt

from .auth_support import claims_for
from .servers import LocalHTTPServer


class FakeIdentityProvider(LocalHTTPServer):
    """``user`` holds the access token's claims (overrides of ``claims_for``);
    ``id_overrides`` the ID token's; ``codes`` what /authorize handed out."""

    def __init__(self, jwt_keys, client_id="console", client_secret="s3cret"):
        self.key = jwt_keys["rsa"]
        self.client_id, self.client_secret = client_id, client_secret
        self.user = {}
        self.id_overrides = {}
        self.codes = {}
        self.token_requests = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _json(self, status, payload):
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):  # noqa: N802
                url = urlparse(self.path)
                if url.path == "/.well-known/openid-configuration":
                    return self._json(200, outer.metadata())
                if url.path == "/jwks":
                    return self._json(200, outer.jwks())
                if url.path == "/authorize":
                    return outer.authorize(self, parse_qs(url.query))
                return self._json(404, {})

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                status, payload = outer.token(form, self.headers.get("Authorization", ""))
                return self._json(status, payload)

        self.serve(Handler)

    def metadata(self):
        return {
            "issuer": self.url,
            "authorization_endpoint": self.url + "/authorize",
            "token_endpoint": self.url + "/token",
            "jwks_uri": self.url + "/jwks",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        }

    def jwks(self):
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]}

    def authorize(self, handler, query):
        """Sign the user in at once: back to ``redirect_uri`` with a code and the state."""
        one = {name: values[0] for name, values in query.items()}
        code = secrets.token_urlsafe(16)
        with self.lock:
            self.codes[code] = one
        target = one["redirect_uri"] + "?" + urlencode({"code": code, "state": one["state"]})
        handler.send_response(302)
        handler.send_header("Location", target)
        handler.end_headers()

    def token(self, form, authorization):
        one = {name: values[0] for name, values in form.items()}
        self.token_requests.append(one)
        expected = (
            "Basic " + base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        )
        if authorization != expected:
            return 401, {"error": "invalid_client"}
        with self.lock:
            asked = self.codes.pop(one.get("code", ""), None)
        if asked is None or one.get("redirect_uri") != asked["redirect_uri"]:
            return 400, {"error": "invalid_grant"}
        digest = hashlib.sha256(one.get("code_verifier", "").encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        if asked.get("code_challenge_method") != "S256" or challenge != asked["code_challenge"]:
            return 400, {"error": "invalid_grant", "error_description": "PKCE"}
        access = jwt.encode(
            claims_for(
                self.user.get("tenant"), **{k: v for k, v in self.user.items() if k != "tenant"}
            ),
            self.key,
            "RS256",
        )
        now = int(time.time())
        id_claims = {
            "iss": self.url,
            "aud": self.client_id,
            "sub": "user-123",
            "iat": now,
            "exp": now + 600,
            "nonce": asked.get("nonce"),
            **self.id_overrides,
        }
        id_token = jwt.encode(id_claims, self.key, "RS256", headers={"kid": "k1"})
        return 200, {
            "access_token": access,
            "id_token": id_token,
            "token_type": "Bearer",
            "expires_in": 3600,
        }
