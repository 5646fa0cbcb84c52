"""An OpenAI-compatible chat completions client over ``requests`` (no vendor SDK).

Works with any server that speaks ``POST {base_url}/chat/completions`` (OpenAI, vLLM,
Ollama, LiteLLM, hosted providers): ``COMMERCE_LLM_BASE_URL`` is the base URL as an
OpenAI SDK would take it (``https://api.openai.com/v1``, ``http://127.0.0.1:11434/v1``),
``COMMERCE_LLM_API_KEY`` is sent as ``Authorization: Bearer <key>`` (local servers may
need none), ``COMMERCE_LLM_MODELS`` is the comma list of models to ask.

Every request has a time-out that ends before the caller's deadline (the job's own
time-out); 429 and 5xx answers, connection errors and answers that are not a chat
completion are retried with exponential backoff, honouring ``Retry-After`` up to
``COMMERCE_LLM_RETRY_MAX_WAIT_SECONDS``.

The base URL is called as configured: redirects are not followed (a 3xx is a refusal) and
proxy environment variables are ignored (``trust_env`` off). What the provider answers
in an error (its body, a connection error's text) goes to the log, never into the job's
error, which the tenant reads.
"""

import logging
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

from ..retry_after import parse_retry_after

CONNECT_TIMEOUT = 5.0
BACKOFF_BASE_SECONDS = 0.5
MIN_REQUEST_SECONDS = 1.0  # a request needs at least this much time left before the deadline
CONFIG_VARIABLES = ("COMMERCE_LLM_BASE_URL", "COMMERCE_LLM_API_KEY", "COMMERCE_LLM_MODELS")

log = logging.getLogger(__name__)


class LlmError(Exception):
    """Base of the client's errors."""


class LlmNotConfigured(LlmError):
    def __init__(self):
        super().__init__(
            "No LLM provider is configured: set COMMERCE_LLM_BASE_URL (an OpenAI-compatible "
            "API, e.g. https://api.openai.com/v1), COMMERCE_LLM_MODELS (comma list of models) "
            "and, if the provider needs one, COMMERCE_LLM_API_KEY."
        )


class LlmUnavailable(LlmError):
    """The provider kept failing (429, 5xx, network) after the retries."""

    def __init__(self, message, status=None, attempts=0):
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class LlmRejected(LlmError):
    """The provider refused the request (a 4xx other than 429): retrying will not help."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class LlmOutOfTime(LlmError):
    """No time is left before the caller's deadline for another request."""


@dataclass(frozen=True)
class LlmSettings:
    base_url: str | None
    api_key: str | None
    models: tuple
    timeout: float = 60.0
    max_retries: int = 4
    retry_max_wait: float = 30.0
    concurrency: int = 4

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "LlmSettings":
        models = tuple(
            m.strip() for m in str(config.get("LLM_MODELS") or "").split(",") if m.strip()
        )
        return cls(
            base_url=(config.get("LLM_BASE_URL") or "").strip() or None,
            api_key=(config.get("LLM_API_KEY") or "").strip() or None,
            models=models,
            timeout=float(config.get("LLM_TIMEOUT_SECONDS") or 60.0),
            max_retries=int(config.get("LLM_MAX_RETRIES") or 0),
            retry_max_wait=float(config.get("LLM_RETRY_MAX_WAIT_SECONDS") or 0.0),
            concurrency=max(1, int(config.get("LLM_CONCURRENCY") or 1)),
        )


def _content(data):
    """The text of a chat completion, or None when ``data`` is not one."""
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return None


class ChatClient:
    """Chat completions against one OpenAI-compatible base URL; safe to share by threads."""

    def __init__(self, settings, sleep=time.sleep, clock=time.monotonic):
        if not settings.base_url:
            raise LlmNotConfigured()
        self.settings = settings
        self.url = settings.base_url.rstrip("/") + "/chat/completions"
        self._sleep = sleep
        self._clock = clock
        self._local = threading.local()

    def _session(self):
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            session.trust_env = False  # no HTTP(S)_PROXY, no .netrc: the configured URL only
            session.headers["Content-Type"] = "application/json"
            if self.settings.api_key:
                session.headers["Authorization"] = f"Bearer {self.settings.api_key}"
        return session

    def _time_left(self, deadline):
        return float("inf") if deadline is None else deadline - self._clock()

    def complete(self, model: str, prompt: str, deadline: float | None = None) -> str:
        """The assistant's answer to one user message ``prompt`` from ``model``."""
        body = {"model": model, "messages": [{"role": "user", "content": prompt}]}
        settings = self.settings
        attempt = 0
        while True:
            left = self._time_left(deadline)
            if left < MIN_REQUEST_SECONDS:
                raise LlmOutOfTime("The job's time-out leaves no time for another request.")
            read_timeout = min(settings.timeout, left)
            status, wait = None, None
            try:
                response = self._session().post(
                    self.url,
                    json=body,
                    timeout=(min(CONNECT_TIMEOUT, read_timeout), read_timeout),
                    allow_redirects=False,
                )
            except requests.RequestException as error:
                log.warning("LLM %s: %s: %s", model, type(error).__name__, error)
                failure = type(error).__name__
            else:
                status = response.status_code
                if 200 <= status < 300:
                    try:
                        text = _content(response.json())
                    except ValueError:
                        text = None
                    if text is not None:
                        return text
                    failure = "the answer is not a chat completion"
                elif status == 429 or status >= 500:
                    failure = f"HTTP {status}"
                    wait = parse_retry_after(response.headers.get("Retry-After"))
                else:
                    log.warning("LLM %s refused: HTTP %s: %s", model, status, response.text[:300])
                    redirect = " (redirects are not followed)" if 300 <= status < 400 else ""
                    raise LlmRejected(f"{model}: HTTP {status}{redirect}", status=status)
            if attempt >= settings.max_retries:
                raise LlmUnavailable(
                    f"{model}: {failure} (after {attempt + 1} attempts)",
                    status=status,
                    attempts=attempt + 1,
                )
            if wait is None:
                backoff = BACKOFF_BASE_SECONDS * 2**attempt
                wait = min(settings.retry_max_wait, backoff * random.uniform(0.5, 1.0))
            elif wait > settings.retry_max_wait:
                raise LlmUnavailable(
                    f"{model}: {failure}, Retry-After {wait:.0f} s is longer than "
                    f"COMMERCE_LLM_RETRY_MAX_WAIT_SECONDS ({settings.retry_max_wait:.0f} s)",
                    status=status,
                    attempts=attempt + 1,
                )
            if self._time_left(deadline) - wait < MIN_REQUEST_SECONDS:
                raise LlmOutOfTime("The job's time-out leaves no time to retry the provider.")
            self._sleep(wait)
            attempt += 1
