"""Fixtures of the JupyterHub tests: a deployment of the course on this machine (hub/testbed.py)
and a headless Chromium to use it as a person does."""

import os
import shutil

import pytest

from tests.support.browser import headless_chromium


@pytest.fixture(scope="module")
def needs_root():
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("the hub's tests create local accounts: run them as root (make test does)")


@pytest.fixture(scope="module")
def chromium():
    """Headless Chromium through selenium (as tests/book/conftest.py drives it for the book)."""
    drv = headless_chromium(page_load_timeout=120, window_size=(1400, 1000))
    yield drv
    drv.quit()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test leaves what the browser showed: /var/tmp/agt-hub/failure.png and
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
