"""Headless Chromium through selenium, as the book's and the hub's browser tests drive it."""

import shutil

import pytest


def headless_chromium(page_load_timeout=60, window_size=None, console_log=False):
    """A selenium Chrome driver on the system's chromium and chromedriver (`make sysdeps`);
    the caller quits it."""
    webdriver = pytest.importorskip("selenium.webdriver")
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    assert chromium and driver_path, "run `make sysdeps` (chromium + chromium-driver)"
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    if window_size:
        opts.add_argument(f"--window-size={window_size[0]},{window_size[1]}")
    if console_log:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(options=opts, service=webdriver.ChromeService(driver_path))
    drv.set_page_load_timeout(page_load_timeout)
    return drv
