"""The Space in a real browser: Debian's headless Chromium loads the page, a document is typed in,
Generate is clicked, and the summary and the metrics panel are read back (screenshot in artifacts/)."""
import shutil
import socket
from pathlib import Path

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1800",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
DOCUMENT = ("Shares in the bank fell sharply after it reported a drop in annual profits. "
            "The striker scored twice as the club won the league match on Saturday. "
            "Analysts said the firm's sales and market share were hit by higher interest rates. "
            "The coach praised the players and the fans after the cup final. "
            "The company will cut costs and its chief executive expects growth in the economy next year. "
            "The team's goalkeeper saved a penalty in the second half of the game.")

pytestmark = [pytest.mark.browser,  # and gradio's queue calls pandas options that pandas 3 deprecates:
              pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),
              pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]


@pytest.fixture(scope="module")
def url():
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()) and not shutil.which("chromium"):
        pytest.skip("Debian's chromium and chromium-driver are not installed (bash scripts/setup.sh --dev)")
    pytest.importorskip("selenium", reason="selenium is not installed (requirements-dev.txt)")
    from space.app import build_app
    from space.catalog import build_catalog
    from space.service import Service

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo = build_app(Service(build_catalog(models_dir=None)))
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    # both paths given, so Selenium Manager never tries to download a driver
    driver = webdriver.Chrome(service=DriverService(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def test_generate_shows_the_summary_and_the_metrics(url, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(url)
    wait = WebDriverWait(browser, 60)
    box = wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, "#document textarea")))
    box.send_keys(DOCUMENT)
    browser.find_element(By.CSS_SELECTOR, "#generate").click()
    wait.until(lambda d: "stas" in d.find_element(By.CSS_SELECTOR, "#metrics").text)
    metrics = browser.find_element(By.CSS_SELECTOR, "#metrics").text
    summary = " ".join(browser.find_element(By.CSS_SELECTOR, "#summary").text.split())  # spans on separate lines
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "space_generate.png"))
    # the default topic is the first one, "business": the baseline keeps the three business sentences
    assert all(s in summary for s in ("Shares in the bank", "Analysts said", "The company will cut costs"))
    assert not any(s in summary for s in ("striker", "coach", "goalkeeper"))
    assert "topic affinity" in metrics  # the score's one-line meaning is shown beside its value


def test_sweep_tab_shows_one_row_per_topic(url, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(url)
    wait = WebDriverWait(browser, 60)
    wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, "#document textarea"))).send_keys(DOCUMENT)
    next(tab for tab in browser.find_elements(By.CSS_SELECTOR, "button[role=tab]") if tab.text == "Sweep").click()
    wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, "#sweep"))).click()
    wait.until(lambda d: "tech" in d.find_element(By.CSS_SELECTOR, "#sweep-table").text)
    table = browser.find_element(By.CSS_SELECTOR, "#sweep-table").text
    browser.save_screenshot(str(ARTIFACTS / "space_sweep.png"))
    # one row per topic of the default topic space, each with its summary and STAS column
    assert all(topic in table for topic in ("business", "entertainment", "politics", "sport", "tech"))
    assert "stas" in table and "The striker scored twice" in table and "Shares in the bank" in table
