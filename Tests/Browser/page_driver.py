#!/usr/bin/python3
"""Drives headless Chromium through Selenium for the parent's page tests, one step at a
time: the Swift test writes a JSON object per line on standard input and reads one JSON
answer per line on standard output, so it can check the gateway (dig, a tunnel, the log)
between two clicks.

Steps: {"op": "get", "url"}; {"op": "fill", "css", "text"}; {"op": "click", "css"}
(the first match; "text" narrows to a button or link whose text is exactly that);
{"op": "click_in", "within", "contains", "css", "text"} (inside the first "within" element
whose text contains "contains"); {"op": "text", "css"}; {"op": "source"}; {"op": "url"};
{"op": "select", "css", "value"}; {"op": "size", "width", "height"};
{"op": "screenshot", "path"}; {"op": "quit"}.
Answers: {"ok": true, "value": ...} or {"ok": false, "error": "..."}.
"""

import json
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.support.ui import Select, WebDriverWait


def browser(profile, extra):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--user-data-dir=" + profile,
        "--window-size=1280,900",
        *extra,
    ):
        options.add_argument(flag)
    # The page's certificate is the gateway's own, made at first start: the tests compare
    # its fingerprint elsewhere; here the browser is told to accept it.
    options.accept_insecure_certs = True
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def first(driver, css, text=None):
    # A document replaced while it is read (a redirect's page arriving) makes the element
    # handles of the old one fail: read again from the new one, for a few seconds at most.
    def matching(_):
        for element in driver.find_elements(By.CSS_SELECTOR, css):
            if text is None or element.text.strip() == text:
                return element
        return None
    found = again(driver, matching)
    if found is not None:
        return found
    raise LookupError("nothing matches %s%s at %s: %s" % (
        css, "" if text is None else " with text %r" % text, driver.current_url, driver.page_source[:600]))


def submit(driver, find):
    """Clicks what `find` returns and waits for the page the click leads to: every button
    of the page posts a form and is answered by a redirect, so the old document goes stale
    when the new one has arrived. A node of a document replaced before the click is found
    again (the click did not happen, so it is safe to repeat), for a few seconds at most."""
    def click(_):
        element = find()
        page = driver.find_element(By.TAG_NAME, "html")
        element.click()
        return page
    old = again(driver, click)
    def replaced(_):
        # Chromium says a node of a replaced document is stale, or, while the new one is
        # being attached, that it "does not belong to the document": either means gone.
        try:
            old.is_enabled()
            return False
        except WebDriverException:
            return True

    try:
        WebDriverWait(driver, 10).until(replaced)
        WebDriverWait(driver, 10).until(lambda d: d.execute_script("return document.readyState") == "complete")
    except TimeoutException:
        raise TimeoutError("the click led to no new page in 10 s")
    return driver.current_url


def retrying(driver, action):
    """Runs `action` (a lookup and what is done with the node) again when the document was
    replaced in between (a redirect's page arriving, the page's own refresh): each of these
    is safe to repeat; for a few seconds at most."""
    return again(driver, lambda _: action())


def again(driver, attempt, seconds=5):
    """`attempt(driver)`'s result, tried again every 0.1 s while it raises a
    WebDriverException (a node of a replaced document), for `seconds` at most: the
    driver's own wait, whatever the result (None and False included)."""
    box = WebDriverWait(driver, seconds, poll_frequency=0.1, ignored_exceptions=(WebDriverException,)).until(
        lambda d: (attempt(d),))
    return box[0]


def step(driver, request):
    op = request["op"]
    if op == "get":
        driver.get(request["url"])
        return driver.current_url
    if op == "fill":
        def fill():
            element = first(driver, request["css"])
            element.clear()
            element.send_keys(request["text"])
        retrying(driver, fill)
        return None
    if op == "click":
        return submit(driver, lambda: first(driver, request["css"], request.get("text")))
    if op == "click_in":
        def find():
            for box in driver.find_elements(By.CSS_SELECTOR, request["within"]):
                if request["contains"] in box.text:
                    for element in box.find_elements(By.CSS_SELECTOR, request["css"]):
                        if element.text.strip() == request["text"]:
                            return element
            raise LookupError("no %s in a %s holding %r" % (request["text"], request["within"], request["contains"]))
        return submit(driver, find)
    if op == "select":
        retrying(driver, lambda: Select(first(driver, request["css"])).select_by_value(request["value"]))
        return None
    if op == "text":
        return retrying(driver, lambda: first(driver, request["css"]).text)
    if op == "source":
        return driver.page_source
    if op == "url":
        return driver.current_url
    if op == "size":
        driver.set_window_size(request["width"], request["height"])
        return None
    if op == "screenshot":
        # The whole page: the window grows to the document's height first.
        width = driver.get_window_size()["width"]
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, max(height, 200) + 120)
        if not driver.save_screenshot(request["path"]):
            raise OSError("the screenshot was not written")
        return request["path"]
    raise ValueError("unknown step %r" % op)


def main():
    # Chromium flags of the test's own after the profile (a proxy and what bypasses it).
    driver = browser(sys.argv[1], sys.argv[2:])
    driver.set_page_load_timeout(20)
    try:
        print(json.dumps({"ok": True, "value": "ready"}), flush=True)
        for line in sys.stdin:
            request = json.loads(line)
            if request["op"] == "quit":
                print(json.dumps({"ok": True, "value": None}), flush=True)
                break
            try:
                answer = {"ok": True, "value": step(driver, request)}
            except Exception as error:  # every failure goes back to the test, named
                answer = {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
            print(json.dumps(answer), flush=True)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
