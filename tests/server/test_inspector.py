"""The inspector page in a real headless Chromium (Selenium), against a real server process.

Needs ``apt-get install -y chromium chromium-driver``; skipped with that hint otherwise. Set
``AFM_SAVE_SCREENSHOT=1`` to (re)write docs/inspector.png.
"""

from __future__ import annotations

import os
import shutil

import httpx
import pytest

from tests.support.servers import REPO

KEY = "inspector-key-9876543210"
AUTH = {"Authorization": f"Bearer {KEY}"}
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
        reason="chromium/chromedriver not installed (apt-get install -y chromium chromium-driver)",
    ),
]

HISTORY = [
    ("user", "[!] My son is allergic to peanuts: no dish may contain peanuts or peanut oil, ever."),
    ("assistant", "Understood. I will never suggest anything with peanuts or peanut oil."),
    (
        "user",
        "We land in Lisbon on 14 May at 09:40 and stay at a small hotel in Alfama for five nights, "
        "close to the castle, with a view over the river and the old tram line 28 passing just below.",
    ),
    (
        "assistant",
        "Alfama is lovely: steep cobbled streets, fado bars and the castle of São Jorge right above it. "
        "Tram 28 gets crowded after 10:00, so ride it early or walk down to Baixa instead.",
    ),
    ("user", "The weather app says it will be sunny and around 23 degrees most of the week."),
    ("assistant", "Great weather for walking. Bring comfortable shoes, a hat and sunscreen for the viewpoints."),
    ("user", "My wife wants one day trip to Sintra; we have no car and would like to avoid long queues."),
    ("assistant", "Take the early train from Rossio, buy palace tickets online, and start with Pena before 10:00."),
    ("user", "[TRIVIAL] lol ok thanks"),
    ("assistant", "You're welcome! Anything else about the trip?"),
    ("user", "Where can we have dinner near the hotel that is safe for my son?"),
]
QUERY = "Which restaurant in Alfama is safe for my son tonight?"
BUDGET = 150


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-extensions",
        "--window-size=1200,1100",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(arg)
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager look anything up
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def test_inspector_timeline(spawn_server, tmp_path, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    srv = spawn_server(
        "--db",
        str(tmp_path / "inspector.db"),
        "--api-key-env",
        "AFM_TEST_KEY",
        env={"AFM_TEST_KEY": KEY},
        name="inspector",
    )
    with httpx.Client(base_url=srv.url, headers=AUTH, timeout=60, trust_env=False) as c:
        sid = c.post("/v1/sessions").json()["id"]
        for role, content in HISTORY:
            assert c.post(f"/v1/sessions/{sid}/messages", json={"role": role, "content": content}).status_code == 201
        expected = c.post(f"/v1/sessions/{sid}/context", json={"query": QUERY, "budget_tokens": BUDGET}).json()
    fidelities = [item["fidelity"] for item in expected["items"]]
    assert len(set(fidelities)) >= 2, fidelities  # the page has something to colour

    browser.get(srv.url + "/")
    wait = WebDriverWait(browser, 60)
    # Without the key the page reports the API's 401 instead of showing a timeline.
    browser.find_element(By.ID, "session").send_keys(sid)
    browser.find_element(By.ID, "query").send_keys(QUERY)
    budget = browser.find_element(By.ID, "budget")
    budget.clear()
    budget.send_keys(str(BUDGET))
    browser.find_element(By.ID, "build").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "API key"))
    assert "error" in browser.find_element(By.ID, "status").get_attribute("class")

    browser.find_element(By.ID, "apikey").send_keys(KEY)
    browser.find_element(By.ID, "build").click()
    wait.until(lambda d: d.find_element(By.ID, "timeline").get_attribute("data-ready") == "1")

    items = browser.find_elements(By.CSS_SELECTOR, "#timeline li.item")
    assert len(items) == len(HISTORY)
    for item, fidelity, exp in zip(items, fidelities, expected["items"]):
        classes = item.get_attribute("class").split()
        assert f"fidelity-{fidelity}" in classes, (classes, fidelity)
        assert item.get_attribute("data-fidelity") == fidelity
        text = item.text
        assert exp["importance"] in text and f"score {exp['score']:.3f}" in text
        assert exp["reason"] and exp["reason"] in text  # why the message took this form
    # Colours differ by fidelity (the CSS variable reaches the border).
    colours = {f: items[i].value_of_css_property("border-left-color") for i, f in enumerate(fidelities)}
    assert len(set(colours.values())) == len(set(colours)), colours
    assert "CRITICAL" in items[0].text and "fidelity-full" in items[0].get_attribute("class")

    bar = browser.find_element(By.ID, "budget-fill")
    assert bar.get_attribute("data-used") == str(expected["tokens_used"])
    assert bar.get_attribute("data-budget") == str(BUDGET)
    width = float(bar.value_of_css_property("width").rstrip("px"))
    track = float(browser.find_element(By.CSS_SELECTOR, ".budget-track").value_of_css_property("width").rstrip("px"))
    assert abs(width / track - expected["tokens_used"] / BUDGET) < 0.02
    assert f"{expected['tokens_used']} / {BUDGET} tokens" in browser.find_element(By.ID, "budget-label").text

    # The session list fills the datalist.
    browser.find_element(By.ID, "load-sessions").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "session(s)"))

    # No request left the page for another origin.
    origins = browser.execute_script("return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)")
    assert set(origins) <= {srv.url}, origins

    if os.environ.get("AFM_SAVE_SCREENSHOT") == "1":
        browser.find_element(By.ID, "build").click()
        wait.until(lambda d: d.find_element(By.ID, "timeline").get_attribute("data-ready") == "1")
        target = REPO / "docs" / "inspector.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(1200, min(max(900, height + 40), 2400))
        assert browser.save_screenshot(str(target))


def test_inspector_shows_thumbnails_and_how_each_attachment_was_sent(spawn_server, tmp_path, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.support.media import file_part, image_part

    srv = spawn_server("--db", str(tmp_path / "inspector-media.db"), "--no-abstractive", name="inspector-media")
    history = [
        (
            "user",
            [
                {"type": "text", "text": "[!] Our agreement: the report deadline and the budget cap bind us."},
                file_part("pdf/agreement_en.pdf"),
            ],
        ),
        ("assistant", "Understood: delivery by 15 October 2025 and no more than EUR 48,000 in total."),
        ("user", [{"type": "text", "text": "the pricing table screenshot"}, image_part("png/pricing_en.png", "high")]),
        ("assistant", "The Team plan at $49 a month fits your 25 users."),
        (
            "user",
            [
                {"type": "text", "text": "and a photo of our office cat"},
                image_part("photo/chelsea.jpg", "low", "image/jpeg"),
            ],
        ),
        ("assistant", "What a lovely cat!"),
    ]
    query, budget = "Can we afford the Business plan for a year within the cap?", 800
    with httpx.Client(base_url=srv.url, timeout=120, trust_env=False) as c:
        sid = c.post("/v1/sessions").json()["id"]
        for role, content in history:
            assert c.post(f"/v1/sessions/{sid}/messages", json={"role": role, "content": content}).status_code == 201
        expected = c.post(f"/v1/sessions/{sid}/context", json={"query": query, "budget_tokens": budget}).json()

    browser.get(srv.url + "/#session=" + sid)
    browser.find_element(By.ID, "query").send_keys(query)
    field = browser.find_element(By.ID, "budget")
    field.clear()
    field.send_keys(str(budget))
    browser.find_element(By.ID, "build").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "timeline").get_attribute("data-ready") == "1")

    boxes = browser.find_elements(By.CSS_SELECTOR, "#timeline .attachment")
    sent = [a["sent"] for item in expected["items"] for a in item["attachments"]]
    assert [b.get_attribute("data-sent") for b in boxes] == sent and len(sent) == 3
    thumbs = browser.find_elements(By.CSS_SELECTOR, "#timeline .attachment img.thumb")
    assert len(thumbs) == 3  # the PDF's first page, the screenshot, the photo
    for thumb in thumbs:  # decoded by the browser, at most 256 px
        width = browser.execute_script("return arguments[0].naturalWidth", thumb)
        assert 0 < width <= 256
    assert "agreement_en.pdf · 3 pages" in boxes[0].text
    if os.environ.get("AFM_SAVE_SCREENSHOT") == "1":
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(1200, min(max(900, height + 40), 2400))
        assert browser.save_screenshot(str(REPO / "docs" / "inspector_multimodal.png"))
