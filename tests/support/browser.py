"""A real browser for the suite: Debian's headless Chromium driven by selenium through the
system ChromeDriver (browser downloads do not work here, so selenium never fetches one).

``.ci/run`` installs ``chromium`` and ``chromium-driver``; where they are missing the
browser tests fail under CI (``CI=true``) and are skipped elsewhere with the reason.
``screenshot(driver, name)`` saves a PNG under ``$COMMERCE_SCREENSHOTS`` (default
``.screenshots/`` in the repository) for a person to look at after a run.
"""

import contextlib
import os
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def require_browser() -> None:
    """Fail under CI, skip elsewhere, when the system browser or its driver is missing."""
    if CHROMIUM and CHROMEDRIVER:
        return
    message = "Debian's chromium and chromium-driver are needed (apt-get install them)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@contextlib.contextmanager
def chromium(width: int = 1280, height: int = 900):
    """A headless Chromium session; quits on exit."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver, name: str) -> str:
    """Save the page as ``<name>.png`` in the screenshots folder; returns the path."""
    folder = os.environ.get("COMMERCE_SCREENSHOTS") or os.path.join(ROOT, ".screenshots")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}.png")
    driver.save_screenshot(path)
    return path
