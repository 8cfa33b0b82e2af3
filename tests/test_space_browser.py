"""The Space in a real browser: Debian's headless Chromium loads the page that ``python -m space`` serves
(launched the way a container launches it: the address from ``GRADIO_SERVER_NAME``/``GRADIO_SERVER_PORT``),
and each test drives it as a user would and reads back what is shown (screenshots in artifacts/)."""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--window-size=1400,1800",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
DOCUMENT = (
    "Shares in the bank fell sharply after it reported a drop in annual profits. "
    "The striker scored twice as the club won the league match on Saturday. "
    "Analysts said the firm's sales and market share were hit by higher interest rates. "
    "The coach praised the players and the fans after the cup final. "
    "The company will cut costs and its chief executive expects growth in the economy next year. "
    "The team's goalkeeper saved a penalty in the second half of the game."
)
WRAPPED_CELLS = """return [...document.querySelectorAll(arguments[0])].filter(cell => {
    const range = document.createRange(); range.selectNodeContents(cell);
    return new Set([...range.getClientRects()].map(rect => Math.round(rect.top))).size > 1;
}).map(cell => cell.textContent)"""  # the cells whose text takes more than one line
PAYLOAD = "<img src=x onerror=window.hacked=1>"

pytestmark = [
    pytest.mark.browser,  # and gradio's queue calls pandas options that pandas 3 deprecates:
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    """``python -m space`` with no flags for the address: it must listen where the variables say."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()) and not shutil.which("chromium"):
        pytest.skip("Debian's chromium and chromium-driver are not installed (bash scripts/setup.sh --dev)")
    pytest.importorskip("selenium", reason="selenium is not installed (requirements-dev.txt)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "STEERSUM_LEADERBOARD": str(ROOT / "leaderboard"),
    }
    log = tmp_path_factory.mktemp("space") / "space.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "space", "--models-dir", str(log.parent / "none"), "--store", "none"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    address = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(600):  # start-up imports torch and the metrics: give it time on a busy machine
            if server.poll() is not None:
                pytest.fail(f"python -m space exited {server.returncode}:\n{log.read_text()[-3000:]}")
            try:
                urllib.request.urlopen(address, timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail(f"python -m space did not answer on {address}:\n{log.read_text()[-3000:]}")
        yield address
    finally:
        server.terminate()
        server.wait(timeout=30)


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


# --- helpers --------------------------------------------------------------------------------
def css(browser, selector):
    from selenium.webdriver.common.by import By

    return browser.find_element(By.CSS_SELECTOR, selector)


def shown(browser, selector) -> bool:
    """Whether the element is on the page (gradio 6 leaves hidden components out of the DOM)."""
    from selenium.webdriver.common.by import By

    return any(e.is_displayed() for e in browser.find_elements(By.CSS_SELECTOR, selector))


def text(browser, selector) -> str:
    return " ".join(css(browser, selector).text.split())  # highlighted spans come on separate lines


def wait_for(browser, condition, seconds=60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, seconds).until(condition)


def open_page(url, browser, document=DOCUMENT):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready

    browser.get(url)
    box = wait_for(browser, ready.element_to_be_clickable((By.CSS_SELECTOR, "#document textarea")))
    box.send_keys(document)


def tab(browser, name):
    from selenium.webdriver.common.by import By

    next(t for t in browser.find_elements(By.CSS_SELECTOR, "button[role=tab]") if t.text == name).click()


def pick(browser, dropdown, option):
    """Choose ``option`` (its shown text contains it) in the gradio dropdown with elem_id ``dropdown``."""
    from selenium.webdriver.common.by import By

    css(browser, f"#{dropdown} input").click()
    choice = wait_for(
        browser,
        lambda d: next((o for o in d.find_elements(By.CSS_SELECTOR, "[role=option]") if option in o.text), None),
        10,
    )
    choice.click()


def generate(browser, expect_in_metrics=""):
    css(browser, "#generate").click()
    wait_for(
        browser,
        lambda d: (
            d.find_element("css selector", "#metrics").text.strip()
            and expect_in_metrics in d.find_element("css selector", "#metrics").text
        ),
    )


def shot(browser, name):
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / f"space_{name}.png"))


# --- the page -------------------------------------------------------------------------------
def test_generate_shows_the_summary_and_the_metrics(url, browser):
    open_page(url, browser)
    assert "Only the model-free baselines are served here" in text(browser, "#onboarding")
    assert "python -m training zoo" in text(browser, "#onboarding")
    generate(browser, "stas")
    summary, metrics = text(browser, "#summary"), text(browser, "#metrics")
    shot(browser, "generate")
    # the default topic is the first one, "business": the baseline keeps the three business sentences
    assert all(s in summary for s in ("Shares in the bank", "Analysts said", "The company will cut costs"))
    assert not any(s in summary for s in ("striker", "coach", "goalkeeper"))
    assert "topic affinity" in metrics  # the score's one-line meaning is shown beside its value
    # highlights keep the text's own spacing and words stay whole (gradio's break-all split "busine|sses")
    highlighted = css(browser, "#summary .token.highlighted")
    assert (
        highlighted.value_of_css_property("margin-left") == highlighted.value_of_css_property("margin-right") == "0px"
    )
    assert css(browser, "#summary .textfield").value_of_css_property("word-break") == "normal"
    # the chart shows this result's series, the requested topic as a series of its own
    assert "stas affinity (requested)" in text(browser, "#chart")


def test_switching_variant_clears_results_and_ccs_length_starts_unset(url, browser):
    open_page(url, browser)
    generate(browser, "stas")
    pick(browser, "variant", "CCSBench")
    wait_for(browser, lambda d: not text(d, "#metrics"))
    assert not text(browser, "#summary").strip() or "Shares in the bank" not in text(browser, "#summary")
    assert not shown(browser, "#chart")  # the topic chart is gone, not left with a stale legend
    assert css(browser, "#control-ccs-length input").get_attribute("value") == "not set"
    generate(browser)
    metrics = text(browser, "#metrics")
    shot(browser, "ccs_unset")
    assert "length_hit" not in metrics and "length_error" not in metrics  # no length asked for: none scored
    assert not shown(browser, "#chart")  # nothing to plot for these scores: no empty chart
    pick(browser, "variant", "EntSUM")
    wait_for(browser, lambda d: d.find_elements("css selector", "#control-entity-entity textarea"))[0].send_keys(
        "the coach"
    )
    generate(browser, "entity")
    assert shown(browser, "#chart") and "stas" not in text(browser, "#chart")


def test_user_text_shows_as_text_not_html(url, browser):
    from selenium.webdriver.common.keys import Keys

    open_page(url, browser)
    topic = css(browser, "#control-topic-topic input")
    topic.clear()
    topic.send_keys(PAYLOAD, Keys.ENTER)
    css(browser, "#generate").click()
    # the notice, not the topic's help text ("... an unseen topic typed as free text"), which is always there
    wait_for(browser, lambda d: "unseen topic '<img" in d.find_element("tag name", "body").text)
    shot(browser, "escaped")
    assert "<img src=x" in browser.find_element("tag name", "body").text  # shown as the characters typed
    assert browser.execute_script("return document.querySelectorAll('img[src=\"x\"]').length") == 0
    assert browser.execute_script("return window.hacked") is None


def test_compare_and_sweep_explain_themselves_and_show_no_empty_tables(url, browser):
    open_page(url, browser)
    tab(browser, "Compare")
    assert "Only the baseline is served for this variant" in text(browser, "#compare-note")
    assert not shown(browser, "#compare-table")  # no "1 2 3" header row before a run
    tab(browser, "Sweep")
    assert not shown(browser, "#sweep-table")
    css(browser, "#sweep").click()
    wait_for(browser, lambda d: "tech" in d.find_element("css selector", "#sweep-table").text)
    table = css(browser, "#sweep-table").text
    shot(browser, "sweep")
    # one row per topic of the default topic space, each with its summary and STAS column
    assert all(topic in table for topic in ("business", "entertainment", "politics", "sport", "tech"))
    assert "stas" in table and "The striker scored twice" in table and "Shares in the bank" in table
    pick(browser, "variant", "EntSUM")
    wait_for(browser, lambda d: "no control with a list of values" in text(d, "#sweep-note"))
    assert not css(browser, "#sweep").is_enabled()


def test_leaderboard_and_api_tabs(url, browser):
    from selenium.webdriver.common.by import By

    browser.get(url)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#document textarea"))
    tab(browser, "Leaderboard")
    wait_for(browser, lambda d: shown(d, "#leaderboard"))
    shot(browser, "leaderboard")
    page = css(browser, "#onboarding").size["width"]
    assert css(browser, "#leaderboard").size["width"] > 0.95 * page  # the whole width, not half a column
    wrapped = browser.execute_script(WRAPPED_CELLS, "#leaderboard th, #leaderboard td:not(:first-child)")
    assert wrapped == []  # scores and headers on one line each (they wrapped "41|2", "metho|d")
    tab(browser, "API")
    wait_for(browser, lambda d: url in text(d, "#api-help"))  # this page's own address, not a fixed port
    assert "/compare_readers" in text(browser, "#api-help")


CONTRAST_SCAN = """
function background(e) {  // the first opaque background behind the element
    for (; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return c;
    }
    return 'rgb(255, 255, 255)';
}
return [...document.querySelectorAll('body *')].filter(e => {
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const style = getComputedStyle(e), box = e.getBoundingClientRect();
    return own && box.width > 0 && style.visibility !== 'hidden' && !e.closest('[disabled]');
}).map(e => [e.textContent.trim().slice(0, 40), e.className.toString().slice(0, 40), getComputedStyle(e).color,
             background(e)]);"""  # disabled controls are exempt from WCAG 1.4.3


def test_every_text_on_the_page_reaches_wcag_aa_contrast(url, browser):
    """Help text was 1.91:1 and the Generate button and selected tab 2.80:1; the rendered colours
    (getComputedStyle, against the first opaque background behind each text) are now all at least 4.5:1."""
    from test_space_contrast import AA_TEXT, contrast

    open_page(url, browser)
    texts = browser.execute_script(CONTRAST_SCAN)
    classes = {name for _, cls, _, _ in texts for name in cls.split()}
    assert {"info-text", "selected"} <= classes  # a control's help text and the selected tab are measured
    generate_button = css(browser, "#generate")
    assert (
        contrast(
            generate_button.value_of_css_property("color"), generate_button.value_of_css_property("background-color")
        )
        >= AA_TEXT
    )
    low = [(text, fg, bg, round(contrast(fg, bg), 2)) for text, _, fg, bg in texts if contrast(fg, bg) < AA_TEXT]
    assert low == []


def test_readers_tab_shows_for_persona_only_and_compare_needs_two_models(url, browser):
    open_page(url, browser)
    tabs = lambda: browser.execute_script(  # noqa: E731  (one call: tabs re-render as the variant changes)
        "return [...document.querySelectorAll('button[role=tab]')].filter(t => t.offsetParent).map(t => t.innerText)"
    )
    assert "Readers" not in tabs()  # the topic variant: the tab would silently run persona
    tab(browser, "Compare")
    assert not css(browser, "#compare").is_enabled()  # only the baseline is served: nothing to compare
    pick(browser, "variant", "Personalized")
    wait_for(browser, lambda d: "Readers" in tabs())
    pick(browser, "variant", "CCSBench")
    wait_for(browser, lambda d: "Readers" not in tabs())
    tab(browser, "Sweep")  # the length bins, the control users most want to sweep
    assert css(browser, "#sweep").is_enabled()
    css(browser, "#sweep").click()
    wait_for(
        browser,
        lambda d: (
            d.find_elements("css selector", "#sweep-table")
            and "length_error" in d.find_element("css selector", "#sweep-table").text
        ),
    )
    shot(browser, "sweep_length")
    lines = css(browser, "#sweep-table").text.splitlines()  # header cells, then each row's cells, one per line
    assert [line for line in lines if line in {"0", "1", "2", "3", "4"}] == ["0", "1", "2", "3", "4"]
    assert lines[lines.index("0") + 1] == "1.000"  # bin 0's extract is in bin 0 (length_hit 1)
