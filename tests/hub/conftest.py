"""Fixtures of the JupyterHub tests: a deployment of the course on this machine (hub/testbed.py)
and a headless Chromium to use it as a person does."""

import os
import shutil

import pytest


@pytest.fixture(scope="module")
def needs_root():
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("the hub's tests create local accounts: run them as root (make test does)")


@pytest.fixture(scope="module")
def chromium():
    """Headless Chromium through selenium (as tests/book/conftest.py drives it for the book)."""
    webdriver = pytest.importorskip("selenium.webdriver")
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    assert chromium and driver_path, "run `make sysdeps` (chromium + chromium-driver)"
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    opts.add_argument("--window-size=1400,1000")
    drv = webdriver.Chrome(options=opts, service=webdriver.ChromeService(driver_path))
    drv.set_page_load_timeout(120)
    yield drv
    drv.quit()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test leaves what the browser showed: _build/hub-test/failure.png and
    failure.html (the page's source and address)."""
    report = yield
    driver = getattr(item, "funcargs", {}).get("chromium")
    if report.when == "call" and report.failed and driver is not None:
        from hub.testbed import PREFIX

        PREFIX.mkdir(parents=True, exist_ok=True)
        try:
            driver.save_screenshot(str(PREFIX / "failure.png"))
            html = f"<!-- {driver.current_url} -->\n{driver.page_source}"
            (PREFIX / "failure.html").write_text(html, encoding="utf-8")
        except Exception as e:  # the browser itself is gone: the report says why the test failed
            report.sections.append(("browser", f"no screenshot: {e}"))
    return report
