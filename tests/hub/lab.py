"""What a person does on the course's hub in a browser (selenium, headless Chromium): log in,
use JupyterLab's Assignments tab (nbgrader's assignment list), type into a notebook cell and
save, open a feedback page, and use the instructor's formgrader.

Every wait is WebDriverWait on a condition of the page; the selectors are those of JupyterHub
6.1's login page, JupyterLab 4.6 and nbgrader 0.9.6's lab extension and formgrader."""

import urllib.parse

from selenium.common.exceptions import (
    ElementClickInterceptedException,
    NoSuchElementException,
    StaleElementReferenceException,
)
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

SPAWN_S = 240  # a user's server starting (and JupyterLab loading) on a busy 2-core machine
STEP_S = 90  # one action's result
TRANSIENT = (StaleElementReferenceException, NoSuchElementException)


class Hub:
    def __init__(self, driver, url):
        self.d = driver
        self.url = url

    # --- waiting and finding ---------------------------------------------------------------

    def wait(self, condition, timeout=STEP_S, message="", poll=0.2):
        return WebDriverWait(self.d, timeout, poll, ignored_exceptions=TRANSIENT).until(
            condition, message
        )

    def visible(self, css, timeout=STEP_S):
        return self.wait(EC.visibility_of_element_located((By.CSS_SELECTOR, css)), timeout, css)

    def click(self, element):
        """Click ``element`` (scrolled into view; a JavaScript click when a toast covers it)."""
        self.d.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
        try:
            element.click()
        except ElementClickInterceptedException:
            self.d.execute_script("arguments[0].click();", element)

    def text(self):
        return self.d.find_element(By.TAG_NAME, "body").text

    # --- JupyterHub ------------------------------------------------------------------------

    def login(self, user, password, next_path=None):
        """Log in on the hub's login page as ``user`` (after logging out whoever was in);
        ``next_path``: where the hub sends the browser (default: the user's JupyterLab)."""
        self.d.get(f"{self.url}/hub/logout")
        self.d.delete_all_cookies()
        query = f"?next={urllib.parse.quote(next_path)}" if next_path else ""
        self.d.get(f"{self.url}/hub/login{query}")
        self.visible("#username_input").send_keys(user)
        self.d.find_element(By.CSS_SELECTOR, "#password_input").send_keys(password)
        self.d.find_element(By.CSS_SELECTOR, "#login_submit").click()
        self.wait(lambda d: "/hub/login" not in d.current_url, STEP_S, f"{user}: login refused")

    # --- JupyterLab ------------------------------------------------------------------------

    def lab_ready(self):
        """Wait until the user's JupyterLab (its server spawned by the hub) shows its menus."""
        self.wait(
            EC.presence_of_element_located((By.XPATH, MENU.format("Nbgrader"))),
            SPAWN_S,
            "JupyterLab with nbgrader's menu did not load",
        )

    def open_assignments(self):
        """Nbgrader > Assignments: the assignment list tab."""
        self.click(self.wait(EC.element_to_be_clickable((By.XPATH, MENU.format("Nbgrader")))))
        item = '#jp-mainmenu-nbgrader li[data-command="nbgrader:open-assignment-list"]'
        self.click(self.wait(EC.element_to_be_clickable((By.CSS_SELECTOR, item)), message=item))
        self.visible("#released_assignments_list")

    def tab(self, label):
        xpath = f"//li[contains(@class,'lm-TabBar-tab')][.//div[text()='{label}']]"
        self.click(self.wait(EC.element_to_be_clickable((By.XPATH, xpath)), message=label))

    def row(self, listed, assignment, timeout=STEP_S):
        """The row of ``assignment`` in the ``listed`` ("released", "fetched", "submitted")
        assignments list, once the list shows it."""

        def found(d):
            for row in d.find_elements(By.CSS_SELECTOR, f"#{listed}_assignments_list > .list_item"):
                names = row.find_elements(By.CSS_SELECTOR, ".item_name")
                if names and (names[0].text.split() or [""])[0] == assignment:
                    return row
            return False

        return self.wait(found, timeout, f"{assignment} not in the {listed} list")

    def button(self, listed, assignment, label):
        """Click the row's button (Fetch, Submit, Fetch Feedback)."""

        def ready(_):
            b = self.row(listed, assignment).find_element(By.CSS_SELECTOR, ".item_status button")
            return b if b.text == label and b.is_enabled() else False

        self.click(self.wait(ready, message=f"{listed} {assignment}: no {label} button"))

    def open_fetched_notebook(self, course, assignment, notebook):
        """Expand the fetched assignment and open ``notebook`` from it; wait for its cells."""
        row = self.row("fetched", assignment)
        self.click(row.find_element(By.CSS_SELECTOR, ".assignment-notebooks-link"))
        link = f"#nbgrader-{course}-{assignment}.in .list_item .item_name a"
        self.click(self.visible(link))
        self.wait(
            EC.presence_of_element_located((By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell")),
            STEP_S,
            f"{notebook}.ipynb did not open",
        )

    def cell_with(self, first_line):
        """The code cell whose source begins with ``first_line``."""

        def found(d):
            for cell in d.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell"):
                lines = cell.find_elements(By.CSS_SELECTOR, ".cm-line")
                if lines and lines[0].text.startswith(first_line):
                    return cell
            return False

        return self.wait(found, message=f"no cell begins with {first_line!r}")

    def type_cell(self, first_line, lines):
        """Replace the source of the cell beginning with ``first_line`` by typing ``lines``, one
        Enter after each but the last (the editor indents as a person sees it) -> the source
        the editor then holds."""
        cell = self.cell_with(first_line)
        editor = cell.find_element(By.CSS_SELECTOR, ".cm-content")
        self.click(editor)
        self.wait(lambda d: "jp-mod-editMode" in notebook_classes(d), message="no edit mode")
        ActionChains(self.d).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL).perform()
        keys = ActionChains(self.d)
        for i, line in enumerate(lines):
            keys.send_keys(line)
            if i < len(lines) - 1:
                keys.send_keys(Keys.ENTER)
        keys.perform()
        return self.d.execute_script(
            "return [...arguments[0].querySelectorAll('.cm-line')]"
            ".map(line => line.textContent).join('\\n');",
            self.cell_with(first_line),
        )

    def save(self, name):
        """Ctrl+S; wait until the tab of the file ``name`` no longer shows unsaved changes (the
        server has written it)."""
        ActionChains(self.d).key_down(Keys.CONTROL).send_keys("s").key_up(Keys.CONTROL).perform()
        tab = f"//li[contains(@class,'lm-TabBar-tab')][.//div[text()='{name}']]"
        self.wait(
            lambda d: "jp-mod-dirty" not in d.find_element(By.XPATH, tab).get_attribute("class"),
            message=f"{name} was not saved",
        )

    def fetch_feedback(self, assignment, timeout):
        """Press Fetch Feedback until the submission shows "(view feedback)" (the grading service
        releases the page some seconds after the submission), then follow that link -> the
        submission's timestamp."""

        def fetched(d):
            row = self.row("submitted", assignment)
            links = row.find_elements(By.XPATH, ".//a[contains(., 'view feedback')]")
            if links:
                return links[-1]
            b = row.find_element(By.CSS_SELECTOR, ".item_status button")
            if b.text == "Fetch Feedback" and b.is_enabled():
                self.click(b)
            return False

        link = self.wait(fetched, timeout, "no feedback to fetch", poll=1.0)
        stamp = link.find_element(By.XPATH, "..").text.replace("(view feedback)", "").strip()
        self.click(link)
        return stamp

    def open_listed_file(self, name):
        """Double-click ``name`` in the file browser (as it is now) and wait for its tab."""
        xpath = (
            "//li[contains(@class,'jp-DirListing-item')]"
            f"[.//span[contains(@class,'jp-DirListing-itemText')][normalize-space()='{name}']]"
        )
        item = self.wait(EC.element_to_be_clickable((By.XPATH, xpath)), message=name)
        ActionChains(self.d).double_click(item).perform()

    def html_viewer_text(self, contains, timeout=STEP_S):
        """The text of the HTML page JupyterLab shows in its viewer, once it has ``contains``."""
        frame = self.visible(".jp-HTMLViewer iframe")
        self.d.switch_to.frame(frame)
        try:

            def shown(_):
                text = self.text()
                return text if contains in text else False

            return self.wait(shown, timeout, f"{contains!r} not in the page")
        finally:
            self.d.switch_to.default_content()

    def launch(self):
        """On the hub's "server not running" page (a user's URL before their server started),
        press Launch Server; the hub spawns it and then shows the URL asked for."""
        self.click(self.wait(EC.element_to_be_clickable((By.CSS_SELECTOR, "a#start"))))

    # --- the formgrader --------------------------------------------------------------------

    def formgrader_row(self, assignment, timeout=SPAWN_S):
        """The assignment's row in the formgrader's Manage Assignments table."""
        xpath = f"//table//tr[td[contains(@class,'name')][contains(., '{assignment}')]]"
        return self.wait(
            EC.presence_of_element_located((By.XPATH, xpath)), timeout, f"{assignment} row"
        )

    def collect(self, assignment):
        """Manage Assignments > Collect; wait for the success dialog and close it -> its text."""
        row = self.formgrader_row(assignment)
        self.click(row.find_element(By.CSS_SELECTOR, "td.collect a"))
        modal = self.visible("#success-modal, #error-modal")
        said = modal.text
        self.click(modal.find_element(By.CSS_SELECTOR, ".modal-footer button"))
        self.wait(EC.invisibility_of_element_located((By.CSS_SELECTOR, ".modal")))
        return said


MENU = "//div[contains(@class,'lm-MenuBar-itemLabel')][normalize-space()='{}']"


def notebook_classes(driver):
    return " ".join(
        e.get_attribute("class") for e in driver.find_elements(By.CSS_SELECTOR, ".jp-Notebook")
    )
