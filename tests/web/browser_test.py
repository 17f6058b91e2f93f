#!/usr/bin/env python3
"""browser_test.py - the page of `askdb serve` in a real headless Chromium.

    python3 tests/web/browser_test.py --server real|mock [--shots DIR]
        real: ASKDB (askdb with `serve`) and FAKE_LLM (tests/fake_llm)
        mock: tests/web/mock_server.py stands in for askdb serve

Usually run by tests/web/run.sh (make web-test). Installs nothing: needs
Debian's chromium, chromium-driver and python3-selenium (scripts/deps.sh).

One browser, one server and one scripted model for the whole run: the
tests run in order and the script below holds the model's replies for
them in that order. Each test is a function named after the behaviour it
checks; a failed check ends that test. Output: "ok NAME" or "FAIL NAME:
reason" a test, then "N passed, M failed"; exit status 0 only when M is 0.
Screenshots (light, dark, phone, error, chart, ...) go to --shots
(build/screenshots/), one PNG per moment worth a look; a failed test
leaves one too (fail-NAME.png).
"""
import argparse
import csv
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHOP = os.path.join(ROOT, "examples", "shop.db")


def fence(sql):
    return "```sql\n%s\n```" % sql


# --- the questions, their SQL and the model's script --------------------------

Q_COUNTRY = "How many customers are there in each country?"
SQL_COUNTRY = ("SELECT country, COUNT(*) AS customers FROM customers\n"
               "GROUP BY country ORDER BY customers DESC, country")
A_COUNTRY = "Germany (DE) has the most customers: 10."

Q_FOLLOW = "And only those in the gold loyalty tier?"
SQL_FOLLOW = ("SELECT country, COUNT(*) AS customers FROM customers\n"
              "WHERE loyalty_tier = 'gold'\n"
              "GROUP BY country ORDER BY customers DESC, country")
A_FOLLOW = "Among gold customers, the counts are small in every country."

Q_MONTHS = "What was the revenue of the orders each month in 2024?"
SQL_MONTHS = ("SELECT substr(order_date, 1, 7) AS month, ROUND(SUM(total), 2) AS revenue\n"
              "FROM orders WHERE status <> 'cancelled' AND order_date LIKE '2024%'\n"
              "GROUP BY month ORDER BY month")
A_MONTHS = "Revenue per month of 2024."

Q_LIST = "List the customers with their city and a note"
# The last column's name and values are markup that must stay text.
SQL_LIST = ("SELECT id, first_name, city, CASE WHEN id = 1 THEN '' END AS note,\n"
            "  '<img src=x onerror=\"window.pwned=1\">' AS \"<b>markup</b>\"\n"
            "FROM customers ORDER BY id")
A_LIST = "All 60 customers."

Q_BAD = "Show the customers' shoe sizes"
BAD_SQL = ["SELECT shoe_size FROM customers",
           "SELECT c.shoe_size FROM customers c",
           "SELECT size_of_shoe FROM customers"]

Q_QUEUE = "How many products are there in each category?"
SQL_QUEUE = ("SELECT c.name AS category, COUNT(p.id) AS products FROM categories c\n"
             "JOIN products p ON p.category_id = c.id GROUP BY c.name ORDER BY products DESC, c.name")
A_QUEUE = "Every category has products."

Q_SLOW = "Which products are in the orders of this week?"

Q_PHONE = "How many orders are there of each status?"
SQL_PHONE = ("SELECT status, COUNT(*) AS orders FROM orders\n"
             "GROUP BY status ORDER BY orders DESC, status")
A_PHONE = "Most orders are delivered."


def model_script():
    """The scripted model's replies, in the order the tests ask."""
    s = []
    s += [{"content": fence(SQL_COUNTRY), "delay_ms": 1500}, {"content": A_COUNTRY}]
    s += [{"content": fence(SQL_FOLLOW)}, {"content": A_FOLLOW}]
    s += [{"content": fence(SQL_MONTHS)}, {"content": A_MONTHS}]
    s += [{"content": fence(SQL_LIST)}, {"content": A_LIST}]
    s += [{"content": fence(q)} for q in BAD_SQL]
    # One question from another client holds the only worker for 3 s and
    # another waits for it, then takes 1.5 s, while the page's question
    # waits in the queue behind both.
    s += [{"content": fence("SELECT COUNT(*) AS n FROM products"), "delay_ms": 3000}]
    s += [{"content": fence("SELECT COUNT(*) AS n FROM categories"), "delay_ms": 1500}]
    s += [{"content": fence(SQL_QUEUE)}, {"content": A_QUEUE}]
    # Questions cancelled once the model has them: the Cancel button,
    # Escape, the Cancel button with the next question typed meanwhile.
    s += [{"content": fence("SELECT name FROM products"), "delay_ms": 20000}] * 3
    s += [{"content": fence(SQL_PHONE)}, {"content": A_PHONE}]
    return s


def rows_of(sql):
    con = sqlite3.connect("file:%s?mode=ro" % SHOP, uri=True)
    try:
        cur = con.execute(sql)
        return [d[0] for d in cur.description], [list(r) for r in cur.fetchall()]
    finally:
        con.close()


# --- servers -------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port_file(path, proc, what, timeout=15):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s" % (what, proc.returncode))
        if os.path.exists(path) and open(path).read().strip():
            return int(open(path).read())
        time.sleep(0.05)
    raise RuntimeError("%s did not start" % what)


def wait_http(url, proc, what, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s" % (what, proc.returncode))
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("%s did not answer %s" % (what, url))


class Servers:
    """The scripted model and askdb serve (or the mock), stopped on close."""

    def __init__(self, mode, tmp, dbs):
        self.procs = []
        self.others = {}
        self.mode = mode
        self.tmp = tmp
        script = os.path.join(tmp, "script.json")
        with open(script, "w") as f:
            json.dump(model_script(), f)
        self.llm_log = os.path.join(tmp, "llm.log")
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("ASKDB_") or k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY") or \
                    k.lower().endswith("_proxy"):
                del env[k]
        env["ASKDB_CACHE_DIR"] = os.path.join(tmp, "cache")
        env["XDG_STATE_HOME"] = os.path.join(tmp, "state")
        self.err = open(os.path.join(tmp, "server.err"), "w")
        dbargs = []
        for name, path in dbs:
            dbargs += ["--db", "%s=%s" % (name, path)]
        if mode == "mock":
            pf = os.path.join(tmp, "mock.port")
            p = self.start([sys.executable, os.path.join(HERE, "mock_server.py"), "--workers", "1", "--script", script,
                            "--port-file", pf] + dbargs, env)
            self.port = wait_port_file(pf, p, "mock_server.py")
        else:
            pf = os.path.join(tmp, "llm.port")
            p = self.start([os.path.abspath(os.environ["FAKE_LLM"]), "--script", script, "--log", self.llm_log,
                            "--port-file", pf], env)
            self.llm_port = wait_port_file(pf, p, "fake_llm")
            self.port = free_port()
            self.serve(self.port, dbargs, env, ("--workers", "1"))
        self.url = "http://127.0.0.1:%d" % self.port
        wait_http(self.url + "/health", self.procs[-1], "the server")
        self.dbargs, self.env = dbargs, env

    def serve(self, port, dbargs, env, extra=()):
        return self.start([os.path.abspath(os.environ["ASKDB"]), "serve", "--listen", "127.0.0.1:%d" % port,
                           "--llm-url", "http://127.0.0.1:%d/v1" % self.llm_port, "--model", "m"]
                          + list(extra) + dbargs, env)

    def start_with_token(self, token):
        """A second server, same databases, that wants a token: its URL."""
        if self.mode == "mock":
            pf = os.path.join(self.tmp, "token.port")
            p = self.start([sys.executable, os.path.join(HERE, "mock_server.py"), "--script",
                            os.path.join(self.tmp, "script.json"), "--token", token,
                            "--port-file", pf] + self.dbargs, self.env)
            port = wait_port_file(pf, p, "the mock with a token")
        else:
            port = free_port()
            p = self.serve(port, self.dbargs, self.env, ("--token", token))
        url = "http://127.0.0.1:%d" % port
        wait_http(url + "/health", p, "the server with a token")
        return url

    def start_other(self, name, script, options):
        """Another server with its own model script and options (both
        askdb serve and the mock take --candidates N and --max-rows N):
        its URL."""
        sfile = os.path.join(self.tmp, name + ".json")
        with open(sfile, "w") as f:
            json.dump(script, f)
        if self.mode == "mock":
            pf = os.path.join(self.tmp, name + ".port")
            p = self.start([sys.executable, os.path.join(HERE, "mock_server.py"), "--script", sfile,
                            "--port-file", pf] + list(options) + self.dbargs, self.env)
            port = wait_port_file(pf, p, "the mock " + name)
            self.others[name] = (None, p)
        else:
            pf = os.path.join(self.tmp, name + "-llm.port")
            p = self.start([os.path.abspath(os.environ["FAKE_LLM"]), "--script", sfile, "--log",
                            os.path.join(self.tmp, name + "-llm.log"), "--port-file", pf], self.env)
            llm_port = wait_port_file(pf, p, "the fake_llm of " + name)
            port = free_port()
            argv = ([os.path.abspath(os.environ["ASKDB"]), "serve", "--listen", "127.0.0.1:%d" % port,
                     "--llm-url", "http://127.0.0.1:%d/v1" % llm_port, "--model", "m"]
                    + list(options) + self.dbargs)
            p = self.start(argv, self.env)
            self.others[name] = (argv, p)
        url = "http://127.0.0.1:%d" % port
        wait_http(url + "/health", p, "the server " + name)
        return url

    def restart_other(self, name):
        """Stop the server start_other() made as name and start it again
        on the same port (real mode): its conversations are gone."""
        argv, p = self.others[name]
        p.terminate()
        p.wait(20)
        p = self.start(argv, self.env)
        self.others[name] = (argv, p)
        wait_http("http://" + argv[argv.index("--listen") + 1] + "/health", p, "the restarted " + name)

    def kill_other(self, name):
        """Kill the server start_other() made as name (SIGKILL: gone at
        once, its connections cut, as when it crashes or its machine goes)."""
        p = self.others[name][1]
        p.kill()
        p.wait(10)

    def saw_hang_up(self, request_id):
        """Whether the server logged the request as cut short by the client."""
        if self.mode == "mock":
            return any(r["request_id"] == request_id and r["end"] == "cancelled" for r in self.requests())
        with open(os.path.join(self.tmp, "server.err")) as f:
            for line in f:
                if request_id in line and line.startswith("{"):
                    rec = json.loads(line)
                    if rec.get("request_id") == request_id and rec.get("completed") is False:
                        return True
        return False

    def start(self, argv, env):
        p = subprocess.Popen(argv, env=env, stdout=self.err, stderr=self.err,
                             stdin=subprocess.DEVNULL, cwd=self.tmp)
        self.procs.append(p)
        return p

    def requests(self):
        """What the model was asked (real) or what the mock got (mock)."""
        if self.mode == "mock":
            with urllib.request.urlopen(self.url + "/mock/log") as r:
                return json.load(r)
        if not os.path.exists(self.llm_log):
            return []
        with open(self.llm_log) as f:
            return [json.loads(line) for line in f if line.strip()]

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.err.close()


# --- the browser -------------------------------------------------------------

def browser(downloads):
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1366,900", "--force-device-scale-factor=1",
              "--no-first-run", "--disable-extensions", "--lang=en-US"):
        opts.add_argument(a)
    opts.add_experimental_option("prefs", {
        "download.default_directory": downloads, "download.prompt_for_download": False})
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    d = webdriver.Chrome(service=service, options=opts)
    d.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    d.set_script_timeout(10)
    return d


class Failed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failed(msg)


def wait_for(fn, what, timeout=15, step=0.05):
    """Poll fn() until it returns something true; that value, or fail."""
    end = time.time() + timeout
    last = None
    while time.time() < end:
        try:
            v = fn()
            if v:
                return v
        except (WebDriverException, LookupError) as e:
            last = e
        time.sleep(step)
    raise Failed("timed out waiting for %s%s" % (what, " (%s)" % str(last).splitlines()[0] if last else ""))


class Page:
    """What the tests do with the page, in words."""

    def __init__(self, d, url, shots):
        self.d = d
        self.url = url
        self.shots = shots

    def js(self, src, *args):
        return self.d.execute_script(src, *args)

    def open(self, fragment=""):
        self.d.get(self.url + "/" + fragment)
        wait_for(lambda: self.js("return document.documentElement.dataset.ready === '1'"), "the page's script")

    def shot(self, name):
        os.makedirs(self.shots, exist_ok=True)
        self.d.save_screenshot(os.path.join(self.shots, name + ".png"))

    def q(self, css):
        return self.d.find_element(By.CSS_SELECTOR, css)

    def qa(self, css):
        return self.d.find_elements(By.CSS_SELECTOR, css)

    def turns(self):
        return self.qa("#log .turn")

    def last_turn(self):
        t = self.turns()
        check(t, "no question on the page")
        return t[-1]

    def ask(self, question, wait=True):
        n = len(self.turns())
        box = self.q("#question")
        box.clear()
        box.send_keys(question)
        box.send_keys(Keys.ENTER)
        wait_for(lambda: len(self.turns()) == n + 1, "the question to appear")
        if wait:
            return self.wait_done()
        return self.last_turn()

    def wait_done(self, timeout=30):
        t = self.last_turn()
        wait_for(lambda: t.get_attribute("data-state"), "the answer", timeout)
        return t

    def steps(self, turn):
        """The texts of a question's steps, folded away or not."""
        return self.js("return [...arguments[0].querySelectorAll('.steps li')].map(li => li.textContent)", turn)

    def wait_model_asked(self, turn, servers, before):
        """Wait until the question's model request is with the model."""
        wait_for(lambda: any("Generating SQL" in s for s in self.steps(turn)), "the model to be asked")
        if servers.mode == "real":
            wait_for(lambda: len(servers.requests()) > before, "the model's request")

    def table(self, turn):
        """(headers, rows of cell texts) of the table on the current page."""
        return self.js("""
            const t = arguments[0].querySelector('table.rows');
            if (!t) return null;
            return [[...t.querySelectorAll('thead th')].map(th => th.textContent),
                    [...t.querySelectorAll('tbody tr')].map(tr =>
                        [...tr.children].map(td => td.textContent))];""", turn)

    def console_errors(self, allow=()):
        try:
            logs = self.d.get_log("browser")
        except WebDriverException:
            return []
        return [e["message"] for e in logs if e.get("level") == "SEVERE"
                and "favicon.ico" not in e["message"]
                and not any(a in e["message"] for a in allow)]


def fmt_num(v):
    return str(v) if not isinstance(v, float) or v != int(v) else str(int(v))


# --- the tests -----------------------------------------------------------------

def page_lists_databases_and_schema(t):
    t.page.open()
    sel = Select(wait_for(lambda: t.page.q("#db option") and t.page.q("#db"), "the database list"))
    names = [o.get_attribute("value") for o in sel.options]
    check(names == ["shop", "shop_copy"], "databases %r" % names)
    sel.select_by_value("shop")
    wait_for(lambda: t.page.qa("#schema-tree details"), "the schema")
    tables = [d.get_attribute("data-name") for d in t.page.qa("#schema-tree details")]
    for want in ("customers", "orders", "order_items", "products", "customer_revenue"):
        check(want in tables, "the schema lacks %s: %r" % (want, tables))
    # The tree is no live region (a screen reader read it all out, every
    # table, as it came); a status says how many tables came.
    live = t.page.js("return document.querySelector('#schema-tree').closest('[aria-live], [role=status]') === null")
    check(live, "the schema's tree is (in) a live region")
    status = t.page.q("#schema-status")
    check(status.get_attribute("role") == "status" and
          status.get_attribute("textContent") == "%d tables in shop" % len(tables),
          "the schema's status: %r" % status.get_attribute("textContent"))
    # Keys: orders.customer_id points at customers.id, customers.id is the key.
    fk = t.page.js("""return [...document.querySelectorAll('#schema-tree details[data-name=orders] li')]
        .filter(li => li.dataset.name === 'customer_id').map(li => li.textContent)[0]""")
    check(fk and "→ customers.id" in fk, "orders.customer_id has no foreign key badge: %r" % fk)
    pk = t.page.js("""return [...document.querySelectorAll('#schema-tree details[data-name=customers] li')]
        .filter(li => li.dataset.name === 'id').map(li => li.textContent)[0]""")
    check(pk and "PK" in pk, "customers.id is not shown as the key: %r" % pk)
    # Search: "loyalty" leaves customers alone, opened at that column.
    t.page.q("#schema-search").send_keys("loyalty")
    shown = wait_for(lambda: [d.get_attribute("data-name") for d in t.page.qa("#schema-tree details")
                              if d.is_displayed()] == ["customers"] and ["customers"], "the search")
    check(shown == ["customers"], "search shows %r" % shown)
    check(status.get_attribute("textContent") == "1 table matches",
          "the search's status: %r" % status.get_attribute("textContent"))
    cols = [li.get_attribute("data-name") for li in t.page.qa("#schema-tree details[data-name=customers] li")
            if li.is_displayed()]
    check(cols == ["loyalty_tier"], "search shows columns %r" % cols)
    # A click on a name puts it into the question at the cursor.
    box = t.page.q("#question")
    box.clear()
    box.send_keys("count by")
    t.page.q("#schema-tree details[data-name=customers] li[data-name=loyalty_tier] button.name").click()
    check(box.get_attribute("value") == "count by loyalty_tier", "question box: %r" % box.get_attribute("value"))
    check(t.page.js("return document.activeElement.id") == "question", "focus did not return to the question")
    t.page.q("#schema-search").clear()
    t.page.q("#schema-search").send_keys(Keys.SPACE, Keys.BACKSPACE)
    check(status.get_attribute("textContent") == "%d tables in shop" % len(tables),
          "the status after the search: %r" % status.get_attribute("textContent"))
    box.clear()


def serves_every_file_of_the_page_as_built(t):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import web_embed
    vendor = os.environ.get("WEB_VENDOR", os.path.join(ROOT, "build", "web", "vendor"))
    for path, ctype, fpath in web_embed.assets(vendor):
        with urllib.request.urlopen(t.servers.url + path) as r:
            body = r.read()
            check(r.headers["Content-Type"] == ctype, "%s: Content-Type %s" % (path, r.headers["Content-Type"]))
            if t.servers.mode == "real":
                check(r.headers["ETag"], "%s: no ETag" % path)
                if path == "/":
                    csp = r.headers["Content-Security-Policy"] or ""
                    check("default-src 'self'" in csp, "the page's CSP: %r" % csp)
        check(body == open(fpath, "rb").read(), "%s differs from %s" % (path, fpath))
    try:
        urllib.request.urlopen(t.servers.url + "/assets/nope.js")
        raise Failed("/assets/nope.js was served")
    except urllib.error.HTTPError as e:
        check(e.code == 404, "/assets/nope.js: %d" % e.code)


def loads_nothing_from_elsewhere(t):
    urls = t.page.js("return [location.href, ...performance.getEntriesByType('resource').map(e => e.name)]")
    check(len(urls) >= 5, "resources %r" % urls)
    other = [u for u in urls if not u.startswith(t.servers.url + "/")]
    check(not other, "loaded from elsewhere: %r" % other)


def asks_and_streams_the_steps(t):
    t.page.q("#question").send_keys(Q_COUNTRY)
    t.page.q("#question").send_keys(Keys.ENTER)
    turn = wait_for(lambda: t.page.turns() and t.page.last_turn(), "the question")
    # The model takes 1.5 s: the steps before it must show while it thinks.
    seen = wait_for(lambda: (not turn.get_attribute("data-state")) and
                    any("Generating SQL" in s for s in t.page.steps(turn)) and t.page.steps(turn),
                    "a 'Generating SQL' step while the question runs", timeout=10)
    check(not t.page.qa("#log .turn:last-child .sql-box"), "SQL shown before the model answered")
    check(t.page.q("#cancel").is_displayed(), "no Cancel button while the question runs")
    t.page.shot("streaming")
    t.page.wait_done()
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    steps = t.page.steps(turn)
    for want in ("Generating SQL", "The model replied", "Validated the SQL", "Ran the query", "Answered"):
        check(any(want in s for s in steps), "no step %r in %r" % (want, steps))
    check(len(steps) > len(seen), "the steps did not grow: %r then %r" % (seen, steps))
    # The answer in words as askdb serve sends it (the mock too): the
    # model asked and its reply, no answer_text step (sent on a failure).
    check(sum("The model replied" in s for s in steps) == 2 and any("Writing the answer in words" in s for s in steps)
          and not any("answer" in s and "Wrote" in s for s in steps), "the steps of the words: %r" % steps)
    # The SQL, highlighted.
    code = turn.find_element(By.CSS_SELECTOR, ".sql-box code")
    check(code.text.strip() == SQL_COUNTRY, "SQL shown %r" % code.text)
    kws = [k.text for k in code.find_elements(By.CSS_SELECTOR, ".hljs-keyword")]
    check("SELECT" in kws and "GROUP" in kws, "SQL not highlighted: keywords %r" % kws)
    # A category column with numbers: a bar chart is shown first.
    cbtn = turn.find_element(By.CSS_SELECTOR, "button.show-chart")
    check(cbtn.text == "Chart (bar)", "chart button %r" % cbtn.text)
    check(cbtn.get_attribute("aria-pressed") == "true", "the chart is not shown first")
    canvas = turn.find_element(By.CSS_SELECTOR, ".chart-wrap canvas")
    check(canvas.is_displayed() and canvas.size["height"] > 100, "no chart drawn: %r" % canvas.size)
    check(t.page.js("return !!Chart.getChart(arguments[0]) && Chart.getChart(arguments[0]).config.type",
                    canvas) == "bar", "the canvas holds no bar chart")
    check(turn.find_element(By.CSS_SELECTOR, ".answer").text == A_COUNTRY, "no plain-English answer")
    t.page.js("arguments[0].scrollIntoView()", turn)
    t.page.shot("chart")
    # Back to the table: the exact rows.
    turn.find_element(By.CSS_SELECTOR, "button.show-table").click()
    check(not canvas.is_displayed(), "the chart stays after switching to the table")
    cols, rows = rows_of(SQL_COUNTRY)
    head, cells = t.page.table(turn)
    check(head == cols, "headers %r" % head)
    check(cells == [[fmt_num(v) for v in r] for r in rows], "rows %r" % cells)
    t.page.shot("light")


def sorts_the_table_by_a_column(t):
    turn = t.page.last_turn()
    th = turn.find_element(By.CSS_SELECTOR, "table.rows thead th:nth-child(2)")
    th.find_element(By.TAG_NAME, "button").click()
    check(th.get_attribute("aria-sort") == "ascending", "aria-sort %s" % th.get_attribute("aria-sort"))
    _, cells = t.page.table(turn)
    nums = [int(r[1]) for r in cells]
    check(nums == sorted(nums), "not ascending: %r" % nums)
    th.find_element(By.TAG_NAME, "button").click()
    _, cells = t.page.table(turn)
    nums = [int(r[1]) for r in cells]
    check(nums == sorted(nums, reverse=True), "not descending: %r" % nums)
    check(th.get_attribute("aria-sort") == "descending", "aria-sort %s" % th.get_attribute("aria-sort"))


def other_page(t, name, script, options=()):
    """The page of a server of its own (Servers.start_other()) whose model
    answers from script, open, with its schema shown."""
    url = t.servers.start_other(name, script, options)
    page = Page(t.page.d, url, t.page.shots)
    page.open()
    wait_for(lambda: page.qa("#schema-tree details"), "the schema")
    return page


def download(t, turn, kind):
    """The path of the file the turn's "dl-" + kind button saves (kind csv
    or json), the downloads folder emptied first."""
    for f in os.listdir(t.downloads):
        os.unlink(os.path.join(t.downloads, f))
    turn.find_element(By.CSS_SELECTOR, "button.dl-" + kind).click()
    name = wait_for(lambda: [f for f in os.listdir(t.downloads) if f.endswith("." + kind)],
                    "the %s file" % kind.upper())[0]
    # Chromium writes NAME.crdownload and renames it when it is whole, so
    # a file under its own name is complete (and none is empty).
    path = os.path.join(t.downloads, name)
    wait_for(lambda: os.path.getsize(path) > 0, "the %s file's bytes" % kind.upper(), timeout=3)
    return path


def downloads_the_rows_as_csv(t):
    turn = t.page.last_turn()
    data = open(download(t, turn, "csv"), "rb").read()
    cols, rows = rows_of(SQL_COUNTRY)
    want = b"\xef\xbb\xbf" + "".join(",".join(fmt_num(v) for v in r) + "\r\n" for r in [cols] + rows).encode()
    check(data == want, "CSV %r, expected %r" % (data[:200], want[:200]))
    doc = json.load(open(download(t, turn, "json")))
    check(doc["columns"] == cols and doc["rows"] == rows, "JSON %r" % doc)


def copies_the_sql(t):
    turn = t.page.last_turn()
    btn = turn.find_element(By.CSS_SELECTOR, ".sql-box .copy")
    btn.click()
    wait_for(lambda: btn.text in ("Copied", "Copy failed"), "the copy button to answer")
    check(btn.text == "Copied", "copy says %r" % btn.text)


def asks_a_follow_up_in_the_same_conversation(t):
    first = t.page.last_turn().get_attribute("data-request-id")
    turn = t.page.ask(Q_FOLLOW)
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    check(len(t.page.turns()) == 2, "the first answer left the page")
    check(turn.find_element(By.CSS_SELECTOR, ".sql-box code").text.strip() == SQL_FOLLOW, "follow-up SQL")
    cols, rows = rows_of(SQL_FOLLOW)
    turn.find_element(By.CSS_SELECTOR, "button.show-table").click()
    _, cells = t.page.table(turn)
    check(cells == [[fmt_num(v) for v in r] for r in rows], "follow-up rows %r" % cells)
    reqs = t.servers.requests()
    if t.servers.mode == "mock":
        conv = [r["conversation_id"] for r in reqs]
        check(conv[0] is None and conv[1], "conversation ids sent: %r" % conv)
    else:
        # The follow-up's prompt carries the earlier question.
        sql_reqs = [r for r in reqs if Q_FOLLOW in json.dumps(r["body"])]
        check(sql_reqs and Q_COUNTRY in json.dumps(sql_reqs[0]["body"]),
              "the follow-up's prompt lacks the earlier question")
    check(first != turn.get_attribute("data-request-id"), "same request id twice")


def draws_a_line_chart_for_dates(t):
    turn = t.page.ask(Q_MONTHS)
    cbtn = turn.find_element(By.CSS_SELECTOR, "button.show-chart")
    check(cbtn.text == "Chart (line)", "chart button %r" % cbtn.text)
    canvas = turn.find_element(By.CSS_SELECTOR, ".chart-wrap canvas")
    check(t.page.js("return Chart.getChart(arguments[0]).config.type", canvas) == "line", "not a line chart")
    labels = t.page.js("return Chart.getChart(arguments[0]).data.labels", canvas)
    _, rows = rows_of(SQL_MONTHS)
    check(labels == [r[0] for r in rows], "labels %r" % labels)
    t.page.js("arguments[0].scrollIntoView()", turn)
    t.page.shot("chart-line")


def shows_null_apart_from_empty_text_and_pages(t):
    turn = t.page.ask(Q_LIST)
    check(turn.find_element(By.CSS_SELECTOR, "button.show-chart").get_attribute("disabled") is not None,
          "a chart offered for a list")
    _, rows = rows_of(SQL_LIST)
    head, cells = t.page.table(turn)
    check(len(cells) == 25, "first page has %d rows" % len(cells))
    info = turn.find_element(By.CSS_SELECTOR, ".pager span").text
    check(info == "Rows 1–25 of %d" % len(rows), "pager says %r" % info)
    note1 = turn.find_element(By.CSS_SELECTOR, "tbody tr:first-child td:nth-child(4) span")
    note2 = turn.find_element(By.CSS_SELECTOR, "tbody tr:nth-child(2) td:nth-child(4) span")
    check(note1.get_attribute("class") == "empty", "empty text shown as %r" % note1.get_attribute("outerHTML"))
    check(note2.get_attribute("class") == "null" and note2.text == "NULL",
          "NULL shown as %r" % note2.get_attribute("outerHTML"))
    t.page.js("arguments[0].scrollIntoView()", turn)
    t.page.shot("table-null")
    turn.find_element(By.CSS_SELECTOR, ".pager button:nth-child(2)").click()
    _, cells = t.page.table(turn)
    check(cells[0][0] == str(rows[25][0]), "page 2 starts with %r" % cells[0])
    check(head[4] == "<b>markup</b>" and cells[0][4] == rows[0][4], "markup not shown as text: %r" % cells[0])
    check(not t.page.qa("#log img, #log b"), "markup from the database became elements")
    check(t.page.js("return window.pwned === undefined"), "a value ran as script")
    nulls = [r[0] for r in rows if r[2] is None]
    check(nulls, "the fixture has no NULL city")


def explains_a_failure_with_each_attempt(t):
    turn = t.page.ask(Q_BAD)
    check(turn.get_attribute("data-state") == "failed", "state %s" % turn.get_attribute("data-state"))
    box = turn.find_element(By.CSS_SELECTOR, ".error-box")
    check(box.get_attribute("role") == "alert", "the error is not announced")
    items = box.find_elements(By.CSS_SELECTOR, "ol > li")
    check(len(items) == 3, "%d attempts listed" % len(items))
    for li, sql in zip(items, BAD_SQL):
        check("no such column" in li.text, "attempt without its reason: %r" % li.text)
        check(sql in li.find_element(By.CSS_SELECTOR, "code").text, "attempt without its SQL: %r" % li.text)
    # Each failure is said once, by its failed attempt; the repair step
    # right under it repeated it word for word.
    steps = t.page.steps(turn)
    repairs = [i for i, s in enumerate(steps) if "Repairing" in s]
    check(len(repairs) == 2, "repair steps %r" % steps)
    for i in repairs:
        check("Attempt failed (unknown column)" in steps[i - 1], "a repair not under its failure: %r" % steps[i - 1:i + 1])
    for col in ("shoe_size", "c.shoe_size", "size_of_shoe"):
        said = [s for s in steps if "no such column: %s" % col in s]
        check(len(said) == 1, "the failure on %s is said %d times: %r" % (col, len(said), said))
    t.page.js("arguments[0].scrollIntoView()", box)
    t.page.shot("error")
    # Failed, the question is a click away from the box, to be put in
    # other words (it was gone: typed again, or found with Up).
    turn.find_element(By.CSS_SELECTOR, "button.edit-again").click()
    qbox = t.page.q("#question")
    check(qbox.get_attribute("value") == Q_BAD, "the button put %r in the box" % qbox.get_attribute("value"))
    check(t.page.js("return document.activeElement.id") == "question", "the focus is not in the box")
    qbox.clear()


def says_that_askdb_never_changes_the_data(t):
    # A question that asks to change the data: every statement the model
    # writes is refused, and the box says why there is no answer, not
    # only "no valid SQL after 2 attempts" (the note was cut with the
    # attempts' lines of the message).
    stmt = "DELETE FROM customers WHERE country = 'Germany'"
    page = other_page(t, "writes", [{"content": fence(stmt), "repeat": True}])
    turn = page.ask("Delete the customers from Germany")
    check(turn.get_attribute("data-state") == "failed", "state %s" % turn.get_attribute("data-state"))
    box = turn.find_element(By.CSS_SELECTOR, ".error-box")
    msg = box.find_element(By.CSS_SELECTOR, ".error-msg").text
    check(msg.startswith("no valid SQL after 2 attempts"), "the message: %r" % msg)
    check("never changes the data" in msg, "the message does not say why: %r" % msg)
    check("attempt 1:" not in msg, "the attempts are in the message too: %r" % msg)
    check(len(box.find_elements(By.CSS_SELECTOR, "ol > li")) == 2, "the attempts: %r" % box.text)
    page.js("arguments[0].scrollIntoView()", box)
    page.shot("writes-refused")


says_that_askdb_never_changes_the_data.real_only = True


def says_once_that_the_model_is_down(t):
    # Nothing listens where the model should be: the box said "cannot
    # reach model" twice, as its message and again as the one attempt.
    page = other_page(t, "nomodel", [], ("--llm-url", "http://127.0.0.1:%d/v1" % free_port()))
    turn = page.ask(Q_COUNTRY)
    check(turn.get_attribute("data-state") == "failed", "state %s" % turn.get_attribute("data-state"))
    box = turn.find_element(By.CSS_SELECTOR, ".error-box").text
    check(box.count("cannot reach model") == 1, "the error box: %r" % box)
    check("--llm-url" in box, "the error box does not say what to do: %r" % box)
    # The status line's long "No answer: cannot reach model at ..." took
    # a row of its own, between the checkbox and the Ask button, which
    # went down to a third row: it wraps in its place now, beside both.
    status = page.q("#ask-status")
    check(status.text.startswith("No answer: cannot reach model"), "status %r" % status.text)
    rows = page.js("""const r = (s) => document.querySelector(s).getBoundingClientRect();
        const c = r('.ask-bar .check'), st = r('#ask-status'), a = r('#ask-btn');
        return [st.left >= c.right, a.left >= st.right, a.top < st.bottom, st.top < c.bottom];""")
    check(rows == [True, True, True, True], "the status line is not beside the checkbox and the Ask button: %r" % rows)
    page.shot("model-down")


says_once_that_the_model_is_down.real_only = True


def shows_its_place_in_the_queue(t):
    # The status line, a live region, said "Asking…" while the question
    # waited: its place was in the steps alone. It says the place each
    # time it moves, then "Asking…" once the question starts, then the end.
    other = {}
    seen = {"running": [], "queued": []}   # the events each has had

    def ask_elsewhere(key, question):
        # Streamed, so that the test sees where the question is: a step
        # once it holds the worker, `queued` with its place while it waits;
        # `done` carries the answer's JSON.
        req = urllib.request.Request(t.servers.url + "/api/ask", method="POST",
                                     data=json.dumps({"database": "shop", "question": question}).encode(),
                                     headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                event, data = None, []
                for raw in r:
                    line = raw.decode().rstrip("\r\n")
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].strip())
                    elif not line and event:
                        ev = json.loads("\n".join(data)) if data else None
                        seen[key].append((event, ev))
                        if event == "done":
                            other[key] = ev
                        event, data = None, []
        except OSError as e:
            other[key] = e
    running = threading.Thread(target=ask_elsewhere, args=("running", "How many products are there?"))
    queued = threading.Thread(target=ask_elsewhere, args=("queued", "How many categories are there?"))
    running.start()
    try:
        wait_for(lambda: any(e == "step" for e, _ in seen["running"]), "the other question to hold the worker")
        queued.start()
        wait_for(lambda: ("queued", {"position": 1}) in seen["queued"], "the other question to wait in the queue")
        t.page.js(RECORD_STATUS_JS)
        turn = t.page.ask(Q_QUEUE, wait=False)
        wait_for(lambda: any("Waiting for the model — 1 question ahead in the queue" in s for s in t.page.steps(turn)),
                 "the place in the queue", timeout=5)
        wait_for(lambda: t.page.q("#ask-status").text == "Waiting: 1 question ahead in the queue",
                 "the status line to say the place", timeout=2)
        t.page.shot("queued")
        t.page.wait_done()
    finally:
        running.join(35)
        if queued.ident:
            queued.join(35)
    check(isinstance(other.get("running"), dict) and other["running"].get("rows") == [[40]],
          "the running question: %r" % other.get("running"))
    check(isinstance(other.get("queued"), dict) and other["queued"].get("rows") == [[10]],
          "the other queued question: %r" % other.get("queued"))
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    check(turn.find_element(By.CSS_SELECTOR, ".sql-box code").text.strip() == SQL_QUEUE, "SQL after the queue")
    _, rows = rows_of(SQL_QUEUE)
    texts = t.page.js("return window.said")
    check(texts == ["Asking…", "Waiting: 1 question ahead in the queue", "Waiting: next in the queue",
                    "Asking…", "Answered: %d rows" % len(rows)], "the status line said %r" % texts)
    # One step for the wait, its words moved with the place (a step a
    # move was added).
    waits = [s for s in t.page.steps(turn) if "Waiting for the model" in s]
    check(len(waits) == 1 and waits[0].endswith("Waiting for the model — next in the queue"),
          "the waiting steps: %r" % waits)
    # The steps after the wait are timed from the question's start, as
    # the ones before it: they began again at 0 ms, seconds before the
    # wait they came after.
    times = t.page.js("""return [...arguments[0].querySelectorAll('.steps li .t')].map(e => e.textContent)""", turn)
    secs = [float(x.split()[0]) / (1000 if x.endswith(" ms") else 1) for x in times]
    check(secs == sorted(secs) and secs[-1] > 3, "the steps' times: %r" % times)


def in_view(page, node):
    """Whether node's top (a question's heading) is within the log's view."""
    return page.js("""
        const log = document.querySelector('#log').getBoundingClientRect();
        const r = arguments[0].getBoundingClientRect();
        return r.top >= log.top - 1 && r.top < log.bottom - 20;""", node)


def cancels_a_running_question(t):
    before = len(t.servers.requests())
    turn = t.page.ask(Q_SLOW, wait=False)
    t.page.wait_model_asked(turn, t.servers, before)
    # A slow model: the running step says how long it has taken so far.
    wait_for(lambda: "so far" in t.page.js(
        "const e = arguments[0].querySelector('.steps li.run .elapsed'); return e ? e.textContent : ''", turn),
        "the running step's time so far", 5)
    # A reader who scrolled up to an earlier answer is not pulled down
    # while the question runs (its time so far ticks on).
    scrollable = t.page.js("const l = document.querySelector('#log'); l.scrollTop = 0;"
                           "return l.scrollHeight - l.clientHeight > 400")
    check(scrollable, "the log is too short to test its scrolling")
    time.sleep(1.2)
    check(t.page.js("return document.querySelector('#log').scrollTop") == 0, "the log scrolled while the question ran")
    t0 = time.time()
    t.page.q("#cancel").click()
    wait_for(lambda: turn.get_attribute("data-state"), "the cancel", timeout=3)
    check(turn.get_attribute("data-state") == "cancelled", "state %s" % turn.get_attribute("data-state"))
    check(time.time() - t0 < 2, "cancel took %.1f s" % (time.time() - t0))
    check(any("Cancelled" in s for s in t.page.steps(turn)), "no Cancelled step")
    # The step the cancel ended is marked stopped, not with the "!" of a
    # warning (cancelled.png read as if generating the SQL had gone wrong).
    stopped = t.page.js("""return [...arguments[0].querySelectorAll('.steps li')].map((li) =>
        [li.className, li.querySelector('.icon').textContent, li.querySelector('.what').textContent])""", turn)
    check(stopped[-2] == ["stop", "–", "Generating SQL"] and stopped[-1][:2] == ["warn", "!"],
          "the last steps of a cancelled question: %r" % stopped[-2:])
    check(not t.page.q("#cancel").is_displayed(), "Cancel still shown")
    check(not turn.find_elements(By.CSS_SELECTOR, ".elapsed"), "the time so far stays after the cancel")
    check(t.page.q("#ask-btn").is_enabled(), "Ask disabled after the cancel")
    # Whoever pressed Cancel sees what they cancelled, not the earlier
    # answer they had scrolled to while it ran (the status said
    # "Cancelled" under an answered question): its heading in view,
    # marked as cancelled, and its text back in the box, the cursor there,
    # to be edited and asked again.
    wait_for(lambda: in_view(t.page, turn.find_element(By.CSS_SELECTOR, ".q")),
             "the cancelled question in view", timeout=3)
    marks = [m.text for m in turn.find_elements(By.CSS_SELECTOR, ".cancelled-mark") if m.is_displayed()]
    check(marks == ["Cancelled"], "the question is not marked as cancelled: %r" % marks)
    heading = t.page.js("return arguments[0].querySelector('.q').textContent", turn)
    check(heading == Q_SLOW + " Cancelled", "the heading reads %r" % heading)
    box = t.page.q("#question")
    check(box.get_attribute("value") == Q_SLOW, "the box holds %r" % box.get_attribute("value"))
    check(t.page.js("return document.activeElement.id") == "question", "the focus is on %r" %
          t.page.js("return document.activeElement.outerHTML.slice(0, 60)"))
    check(t.page.js("return arguments[0].selectionStart === arguments[0].value.length", box), "the cursor is not at the end")
    status = t.page.q("#ask-status").text
    check(status.startswith("Cancelled") and "back in the box" in status, "status %r" % status)
    rid = turn.get_attribute("data-request-id")
    check(rid, "no request id on the question")
    wait_for(lambda: t.servers.saw_hang_up(rid), "the server to see the cancel", 5)
    t.page.shot("cancelled")


def up_arrow_recalls_earlier_questions(t):
    box = t.page.q("#question")
    # The cancelled question is back in the box: Up gives the one before
    # it, not the same text again (a key that seemed to do nothing).
    check(box.get_attribute("value") == Q_SLOW, "the box holds %r" % box.get_attribute("value"))
    box.send_keys(Keys.ARROW_UP)
    check(box.get_attribute("value") == Q_QUEUE, "Up from the cancelled question gives %r" % box.get_attribute("value"))
    box.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN)
    check(box.get_attribute("value") == Q_SLOW, "Down Down gives %r" % box.get_attribute("value"))
    # Emptied as a person empties it, the box is no longer said to hold it.
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    check(box.get_attribute("value") == "", "the box holds %r" % box.get_attribute("value"))
    check(t.page.q("#ask-status").text == "Cancelled", "status %r" % t.page.q("#ask-status").text)
    box.send_keys(Keys.ARROW_UP)
    check(box.get_attribute("value") == Q_SLOW, "Up gives %r" % box.get_attribute("value"))
    box.send_keys(Keys.ARROW_UP)
    check(box.get_attribute("value") == Q_QUEUE, "Up Up gives %r" % box.get_attribute("value"))
    box.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN)
    check(box.get_attribute("value") == "", "Down Down gives %r" % box.get_attribute("value"))


CONTROL_CONTRAST_JS = """
const lum = (c) => { const m = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => v / 255)
    .map((v) => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));
    return 0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]; };
const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
const bg = getComputedStyle(document.body).backgroundColor;
return ['#question', '#db', '#ask-btn', '#schema-search', '#new-conv'].map((s) => {
    const e = document.querySelector(s);
    return [s, ratio(getComputedStyle(e).borderTopColor, bg)]; });
"""


def control_edges_contrast(page, theme):
    # WCAG 1.4.11: a control's edge 3:1 against the page around it (the
    # primary button is filled with the accent; its edge is that fill).
    for sel, r in page.js(CONTROL_CONTRAST_JS):
        check(r >= 3.0, "%s: the edge of %s contrasts %.2f:1 with the page" % (theme, sel, r))


def switches_to_dark_and_back(t):
    control_edges_contrast(t.page, "light")
    light_bg = t.page.js("return getComputedStyle(document.body).backgroundColor")
    t.page.q("#theme").click()
    check(t.page.js("return document.documentElement.dataset.theme") == "dark", "not dark")
    dark_bg = t.page.js("return getComputedStyle(document.body).backgroundColor")
    check(dark_bg != light_bg, "the background stayed %s" % dark_bg)
    lum = t.page.js("""const m = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number);
                      return (m[0] + m[1] + m[2]) / 3;""")
    check(lum < 60, "dark background is light: %s" % dark_bg)
    # The button says what it does; as a toggle ("pressed") whose name
    # changed with it, a screen reader read "Switch to the light theme,
    # pressed", which says the light theme is on.
    b = t.page.q("#theme")
    check(b.get_attribute("aria-pressed") is None and b.get_attribute("aria-label") == "Switch to the light theme"
          and b.text == "Light", "the theme button: %r" % b.get_attribute("outerHTML"))
    control_edges_contrast(t.page, "dark")
    # The cancelled question, as cancelled.png shows it in the light
    # theme: dark.png showed the status line's "Cancelled" under an empty
    # box, the question's text taken out of it by the test before (as a
    # reader who leaves it does). Its button puts it back, as it does for
    # a reader who comes back to it.
    turn = t.page.last_turn()
    check(turn.get_attribute("data-state") == "cancelled", "the last question is %s" % turn.get_attribute("data-state"))
    turn.find_element(By.CSS_SELECTOR, "button.edit-again").click()
    check(t.page.q("#question").get_attribute("value") == Q_SLOW,
          "the box beside the cancelled question holds %r" % t.page.q("#question").get_attribute("value"))
    status = t.page.q("#ask-status").text
    check(status == "The question is in the box: edit it, then press Enter to ask", "status %r" % status)
    check(in_view(t.page, turn.find_element(By.CSS_SELECTOR, ".q")), "the cancelled question is out of view")
    t.page.shot("dark")
    t.page.q("#question").clear()
    # The chart follows the theme.
    t.page.js("document.querySelector('#log .turn:nth-child(3)').scrollIntoView()")
    t.page.shot("dark-chart")
    t.page.open()
    check(t.page.js("return document.documentElement.dataset.theme") == "dark", "the theme was not kept")
    t.page.q("#theme").click()
    check(t.page.js("return document.documentElement.dataset.theme") == "light", "not light again")


def everything_has_a_name_and_keys_work(t):
    t.page.open()
    wait_for(lambda: t.page.qa("#schema-tree details"), "the schema")
    unnamed = t.page.js("""
        const name = (e) => (e.getAttribute('aria-label') || e.textContent || '').trim() ||
            (e.id && document.querySelector('label[for="' + e.id + '"]') || {}).textContent ||
            (e.closest('label') || {}).textContent || e.getAttribute('placeholder') || '';
        return [...document.querySelectorAll('button, select, input, textarea, a[href]')]
            .filter(e => !e.closest('[hidden]') && !String(name(e)).trim()).map(e => e.outerHTML.slice(0, 80));""")
    check(not unnamed, "controls without a name: %r" % unnamed)
    check(t.page.js("return document.documentElement.lang") == "en", "no lang")
    # Keyboard only: Tab from the page's start reaches the database picker.
    t.page.js("document.activeElement && document.activeElement.blur()")
    body = t.page.q("body")
    seen = []
    for _ in range(6):
        body = t.page.d.switch_to.active_element
        body.send_keys(Keys.TAB)
        seen.append(t.page.js("return document.activeElement.id || document.activeElement.tagName"))
    check("db" in seen, "Tab order %r never reaches the database picker" % seen)
    # Ask with the keyboard alone (Enter) and cancel with Escape.
    box = t.page.q("#question")
    before = len(t.servers.requests())
    box.send_keys("Which products are in the orders of today?")
    box.send_keys(Keys.ENTER)
    turn = wait_for(lambda: t.page.turns() and t.page.last_turn(), "the question")
    t.page.wait_model_asked(turn, t.servers, before)
    box.send_keys(Keys.ESCAPE)
    wait_for(lambda: turn.get_attribute("data-state") in ("cancelled", "failed"), "Escape to cancel", 5)
    check(turn.get_attribute("data-state") == "cancelled", "Escape gave %s" % turn.get_attribute("data-state"))
    # The question is back in the box, the focus there: Enter asks it again.
    check(box.get_attribute("value") == "Which products are in the orders of today?",
          "after Escape the box holds %r" % box.get_attribute("value"))
    check(t.page.js("return document.activeElement.id") == "question", "the focus left the box")
    box.clear()


def keeps_what_was_typed_while_a_question_ran(t):
    # The next question typed while one ran stays in the box when that
    # one is cancelled; the cancelled one's button puts it there instead.
    question = "Which products sold best this week?"
    before = len(t.servers.requests())
    turn = t.page.ask(question, wait=False)
    t.page.wait_model_asked(turn, t.servers, before)
    box = t.page.q("#question")
    box.send_keys("How many orders were shipped?")
    t.page.q("#cancel").click()
    wait_for(lambda: turn.get_attribute("data-state"), "the cancel", 5)
    check(turn.get_attribute("data-state") == "cancelled", "state %s" % turn.get_attribute("data-state"))
    check(box.get_attribute("value") == "How many orders were shipped?",
          "what was typed became %r" % box.get_attribute("value"))
    check(t.page.q("#ask-status").text == "Cancelled", "status %r" % t.page.q("#ask-status").text)
    turn.find_element(By.CSS_SELECTOR, "button.edit-again").click()
    check(box.get_attribute("value") == question, "the button put %r in the box" % box.get_attribute("value"))
    check(t.page.js("return document.activeElement.id") == "question", "the focus is not in the box")
    check("edit it" in t.page.q("#ask-status").text, "status %r" % t.page.q("#ask-status").text)
    box.clear()


def fits_a_phone(t):
    # 360 px: the width of most Android phones (an iPhone's is 390).
    t.page.d.set_window_size(360, 800)
    try:
        t.page.open()
        wait_for(lambda: t.page.qa("#schema-tree details"), "the schema")
        check(not t.page.q("#schema").is_displayed(), "the schema takes the phone's screen")
        # The empty box's hint fits it: the laptop's three lines of keys
        # (Enter, Shift+Enter, Up) were cut in a box with a scroll bar.
        fit = t.page.js("const q = document.querySelector('#question');"
                        "return [q.value, q.scrollHeight, q.clientHeight, q.placeholder]")
        check(fit[0] == "" and fit[1] <= fit[2] + 1, "the box's hint does not fit it: %r" % fit)
        tog = t.page.q("#schema-toggle")
        check(tog.is_displayed(), "no Schema button on a phone")
        turn = t.page.ask(Q_PHONE)
        check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
        canvas = turn.find_element(By.CSS_SELECTOR, ".chart-wrap canvas")
        check(canvas.size["width"] <= 360 and canvas.size["height"] > 100, "chart size %r" % canvas.size)
        over = t.page.js("return document.documentElement.scrollWidth - window.innerWidth")
        check(over <= 0, "the page is %d px wider than the phone" % over)
        t.page.shot("phone")
        turn.find_element(By.CSS_SELECTOR, "button.show-table").click()
        t.page.js("arguments[0].scrollIntoView()", turn.find_element(By.CSS_SELECTOR, ".result-bar"))
        over = t.page.js("return document.documentElement.scrollWidth - window.innerWidth")
        check(over <= 0, "the table makes the page %d px wider than the phone" % over)
        t.page.shot("phone-table")
        tog.click()
        check(t.page.q("#schema").is_displayed(), "the Schema button does not open it")
        check(tog.get_attribute("aria-expanded") == "true", "aria-expanded not set")
        t.page.shot("phone-schema")
    finally:
        t.page.d.set_window_size(1366, 900)


def shows_the_vote_of_the_candidates(t):
    # Two of three candidates give the same rows: the first of them wins
    # with two thirds of the votes, and the third is not asked (settled:
    # nothing it could say would change the vote).
    a = fence(SQL_COUNTRY)
    b = fence(SQL_COUNTRY.replace("COUNT(*)", "COUNT(id)"))
    # (a third reply is never asked for: the next one is the answer's)
    page = other_page(t, "vote", [{"content": a}, {"content": b}, {"content": A_COUNTRY}],
                         ("--candidates", "3"))
    turn = page.ask(Q_COUNTRY)
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    steps = page.steps(turn)
    vote = [s for s in steps if "Voted on the candidates" in s]
    check(vote and "confidence 67%" in vote[0] and "2 of 2 agree" in vote[0] and "1 not needed" in vote[0]
          and "candidate 1 wins" in vote[0], "vote step %r" % vote)
    check(sum("The model replied (candidate" in s for s in steps) == 2, "candidate replies %r" % steps)
    check(any("Candidate 3 not asked" in s and "decided without it" in s for s in steps), "the settled one %r" % steps)
    check(any("2 of 2 valid" in s for s in steps), "validation of the candidates %r" % steps)
    # An HTTP model cannot say how sure it was: the gate asks for the other
    # two after the first, and the timeline does not call it unsure.
    check(any(s.startswith("Generating more candidates") or "Generating more candidates" in s for s in steps)
          and not any("Not sure" in s for s in steps), "later candidates step %r" % steps)
    summary = turn.find_element(By.CSS_SELECTOR, ".summary").text
    check("confidence 67% (1 not needed)" in summary, "the summary's confidence %r" % summary)
    check(turn.find_element(By.CSS_SELECTOR, ".sql-box code").text.strip() == SQL_COUNTRY, "the winner's SQL")
    turn.find_element(By.CSS_SELECTOR, ".steps-toggle").click()
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("vote")


def says_when_the_rows_were_cut(t):
    page = other_page(t, "cut", [{"content": fence("SELECT id, email FROM customers ORDER BY id")},
                                 {"content": "The first customers."}], ("--max-rows", "5"))
    turn = page.ask("List the customers' email addresses")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    notice = turn.find_elements(By.CSS_SELECTOR, ".notice")
    check(notice and "first 5 rows" in notice[0].text and "row limit" in notice[0].text,
          "no truncation notice: %r" % [n.text for n in notice])
    _, cells = page.table(turn)
    check([r[0] for r in cells] == ["1", "2", "3", "4", "5"], "rows %r" % cells)
    # The run's step says why in words: its event's truncated is 1 (rows)
    # or 2 (bytes), which the step showed as "truncated (1)".
    ran = [s for s in page.steps(turn) if "Ran the query" in s]
    check(len(ran) == 1 and "cut at the row limit" in ran[0] and "truncated" not in ran[0],
          "the run's step: %r" % ran)
    # The status line, a live region, says so too.
    status = page.q("#ask-status").text
    check(status == "Answered: the first 5 rows (cut at the row limit)", "status %r" % status)
    if t.servers.mode == "real":
        # askdb puts its note on a line of its own after the model's
        # sentences; the page ran the two together ("customers. Note: ...").
        words = turn.find_element(By.CSS_SELECTOR, ".answer").text
        check(words == "The first customers.\nNote: The result was cut off at 5 rows, so it is incomplete.",
              "the answer in words reads %r" % words)
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("truncated")


def asks_for_a_token_when_the_server_wants_one(t):
    t.page.d.delete_all_cookies()
    t.page.d.get(t.token_url + "/")
    t.page.js("sessionStorage.clear()")
    t.page.d.get(t.token_url + "/")
    dlg = wait_for(lambda: t.page.q("#token-dlg").is_displayed() and t.page.q("#token-dlg"), "the token prompt")
    t.page.shot("token")
    t.page.q("#token-in").send_keys("wrong")
    t.page.q("#token-ok").click()
    wait_for(lambda: t.page.q("#token-err").is_displayed(), "'token refused'")
    t.page.q("#token-in").send_keys("s3cret")
    t.page.q("#token-ok").click()
    wait_for(lambda: t.page.qa("#schema-tree details"), "the schema after the token")
    check(not dlg.is_displayed(), "the prompt stays")
    # A token in the address is taken and removed from it.
    t.page.js("sessionStorage.clear()")
    t.page.d.get("about:blank")
    t.page.d.get(t.token_url + "/#token=s3cret")
    wait_for(lambda: t.page.qa("#schema-tree details"), "the schema with #token=")
    check("token" not in t.page.d.current_url, "the token stays in the URL: %s" % t.page.d.current_url)


asks_for_a_token_when_the_server_wants_one.console_allows = ("status of 401",)


def keeps_the_focus_when_asked_with_the_button(t):
    # Keyboard only, by the Ask button (Tab to it, Enter): the button was
    # disabled under the focus, which fell to the body while the question
    # ran; the Cancel button, shown beside it, was the place to be.
    page = other_page(t, "askbtn", [{"content": fence("SELECT name FROM products"), "delay_ms": 20000}])
    box = page.q("#question")
    box.send_keys("Which products are in the orders of this week?")
    box.send_keys(Keys.TAB, Keys.TAB)
    check(page.js("return document.activeElement.id") == "ask-btn",
          "Tab Tab from the box reaches %r" % page.js("return document.activeElement.id"))
    page.d.switch_to.active_element.send_keys(Keys.ENTER)
    turn = wait_for(lambda: page.turns() and page.last_turn(), "the question")
    wait_for(lambda: page.q("#cancel").is_displayed(), "the Cancel button")
    focus = page.js("return document.activeElement.id || document.activeElement.tagName")
    check(focus == "cancel", "while the question runs the focus is on %r" % focus)
    page.d.switch_to.active_element.send_keys(Keys.ENTER)
    wait_for(lambda: turn.get_attribute("data-state"), "the cancel", 5)
    check(turn.get_attribute("data-state") == "cancelled", "state %s" % turn.get_attribute("data-state"))
    check(page.js("return document.activeElement.id") == "question", "after the cancel the focus is on %r" %
          page.js("return document.activeElement.id || document.activeElement.tagName"))
    box.clear()


def escape_in_the_schema_search_clears_it_only(t):
    # Escape in a search box clears it (the browser's own key); while a
    # question ran it also cancelled the question, minutes of a local
    # model's work gone with a search.
    page = other_page(t, "escsearch", [{"content": fence("SELECT name FROM products"), "delay_ms": 20000}])
    turn = page.ask("Which products are in the orders of this week?", wait=False)
    wait_for(lambda: any("Generating SQL" in s for s in page.steps(turn)), "the model to be asked")
    search = page.q("#schema-search")
    search.send_keys("cust")
    search.send_keys(Keys.ESCAPE)
    time.sleep(0.5)
    check(search.get_attribute("value") == "", "Escape left %r in the search" % search.get_attribute("value"))
    check(not turn.get_attribute("data-state"), "Escape in the search ended the question: %s" %
          turn.get_attribute("data-state"))
    page.q("#cancel").click()
    wait_for(lambda: turn.get_attribute("data-state"), "the cancel", 5)
    page.q("#question").clear()


def shows_a_listing_as_a_table_first(t):
    # Every order with its customer, status and total: a date column and a
    # number made it a line chart first, the totals zigzagging by time and
    # the names and statuses nowhere. A result whose columns the chart
    # leaves out is a table first, its chart a click away.
    sql = ("SELECT o.id, c.first_name, c.email, o.order_date, o.status, o.total\n"
           "FROM orders o JOIN customers c ON c.id = o.customer_id ORDER BY o.id")
    page = other_page(t, "listing", [{"content": fence(sql)}, {"content": "All 250 orders."}])
    turn = page.ask("List the orders with their customer, date, status and total")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    tbtn = turn.find_element(By.CSS_SELECTOR, "button.show-table")
    check(tbtn.get_attribute("aria-pressed") == "true", "the table is not shown first")
    head, cells = page.table(turn)
    check(head == ["id", "first_name", "email", "order_date", "status", "total"] and len(cells) == 25,
          "the table: %r, %d rows" % (head, len(cells)))
    check(not turn.find_elements(By.CSS_SELECTOR, ".chart-wrap"), "a chart was drawn")
    cbtn = turn.find_element(By.CSS_SELECTOR, "button.show-chart")
    check(cbtn.is_enabled() and cbtn.text == "Chart (line)", "chart button %r" % cbtn.text)
    cbtn.click()
    canvas = turn.find_element(By.CSS_SELECTOR, ".chart-wrap canvas")
    check(canvas.is_displayed(), "the chart button draws no chart")
    tbtn.click()
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("listing")


def turns_the_pages_from_the_top_with_the_keyboard(t):
    # Read to the end of a page, then Next: the rows' view stayed scrolled
    # to its end, on rows 45-50, the start of the page out of sight. And
    # Enter on Next to the last page disabled the button under the focus,
    # which fell to the page's body: Tab started over from the top.
    sql = "SELECT id, first_name, last_name, city, country FROM customers ORDER BY id"
    page = other_page(t, "pages", [{"content": fence(sql)}, {"content": "All 60 customers."}])
    turn = page.ask("List the customers with their city and country")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    wrap = turn.find_element(By.CSS_SELECTOR, ".table-wrap")
    scrolls = page.js("arguments[0].scrollTop = arguments[0].scrollHeight;"
                      "return arguments[0].scrollTop > 0", wrap)
    check(scrolls, "the rows' view does not scroll: the test needs a taller page of rows")
    nxt = turn.find_element(By.CSS_SELECTOR, ".pager button[aria-label='Next page']")
    nxt.send_keys(Keys.ENTER)
    top = page.js("return arguments[0].scrollTop", wrap)
    first = page.table(turn)[1][0][0]
    check(top == 0 and first == "26", "after Next the view is %d px down, its first row %s" % (top, first))
    nxt.send_keys(Keys.ENTER)
    check(page.table(turn)[1][0][0] == "51", "the third page starts at %s" % page.table(turn)[1][0][0])
    check(not nxt.is_enabled(), "Next is enabled on the last page")
    focus = page.js("const e = document.activeElement; return e.getAttribute('aria-label') || e.tagName")
    check(focus == "Previous page", "on the last page the focus is on %r" % focus)
    page.js("arguments[0].scrollIntoView()", turn.find_element(By.CSS_SELECTOR, ".result"))
    page.shot("last-page")


def keeps_big_integers_exact(t):
    # 2^53 + 1 and past: JSON.parse alone would show ...992 and export it.
    sql = "SELECT 9007199254740993 AS order_ref, 'a' AS label UNION ALL SELECT -9223372036854775807, 'b'"
    page = other_page(t, "big", [{"content": fence(sql)}, {"content": "Two references."}])
    turn = page.ask("Which order references are there?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    turn.find_element(By.CSS_SELECTOR, "button.show-table").click()
    _, cells = page.table(turn)
    check([r[0] for r in cells] == ["9007199254740993", "-9223372036854775807"], "cells %r" % cells)
    data = open(download(t, turn, "csv"), "rb").read()
    check(data == b"\xef\xbb\xbforder_ref,label\r\n9007199254740993,a\r\n-9223372036854775807,b\r\n", "CSV %r" % data)
    doc = json.load(open(download(t, turn, "json")))
    check([r[0] for r in doc["rows"]] == [9007199254740993, -9223372036854775807], "JSON %r" % doc["rows"])
    # Sorting mixes them with nothing else: descending puts the big one first.
    th = turn.find_element(By.CSS_SELECTOR, "thead th button")
    th.click()
    th.click()
    _, cells = page.table(turn)
    check([r[0] for r in cells] == ["9007199254740993", "-9223372036854775807"], "sorted %r" % cells)


def wraps_long_text_in_its_cell(t):
    # A description of 1,800 characters on one line pushed the columns
    # after it some 15,000 pixels to the right; its line breaks were lost.
    sql = ("SELECT name, replace(hex(zeroblob(300)), '00', 'lorem ') AS description,\n"
           "  'line one' || char(10) || 'line two' AS note, price FROM products ORDER BY id LIMIT 3")
    page = other_page(t, "long", [{"content": fence(sql)}, {"content": "Three products."}])
    turn = page.ask("Describe the first three products")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    turn.find_element(By.CSS_SELECTOR, "button.show-table").click()
    head, cells = page.table(turn)
    check(head == ["name", "description", "note", "price"], "headers %r" % head)
    check(cells[0][1] == "lorem " * 300, "the description was cut: %d characters" % len(cells[0][1]))
    wrap = turn.find_element(By.CSS_SELECTOR, ".table-wrap")
    width = page.js("return arguments[0].querySelector('table').scrollWidth", wrap)
    check(width < 1.6 * wrap.size["width"], "the table is %dpx wide in a view of %dpx" % (width, wrap.size["width"]))
    note = page.js("return arguments[0].querySelector('tbody tr td:nth-child(3)').innerText", turn)
    check(note == "line one\nline two", "the note's line break is lost: %r" % note)
    page.js("arguments[0].querySelector('.result').scrollIntoView()", turn)
    page.shot("long-text")


def wraps_a_long_column_name(t):
    # A column the model did not name is named by its whole expression
    # (SQLite, and others): on one line, a header of 250 characters made
    # its column some 1,900 pixels wide, the numbers under it far to the
    # right of the countries they count, past the edge of the view.
    expr = " + ".join("SUM(CASE WHEN loyalty_tier = '%s' AND signup_date >= '2023-01-01' THEN 1 ELSE 0 END)" % tier
                      for tier in ("gold", "silver", "bronze"))
    sql = "SELECT country, %s FROM customers GROUP BY country ORDER BY country" % expr
    page = other_page(t, "longname", [{"content": fence(sql)}, {"content": "Counts by country."}])
    turn = page.ask("How many customers of each tier signed up since 2023, by country?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    # Its chart's axis is titled by the name's start, not by its middle
    # cut at both ends ("oyalty_tier = 'silver' AND signup_date >= '2023-01-0").
    title = page.js("""const c = window.Chart && Chart.getChart(arguments[0].querySelector('canvas'));
        return c && c.options.scales.y.title.text;""", turn)
    check(title == expr[:39] + "\u2026", "the chart's axis title: %r" % title)
    page.js("arguments[0].querySelector('.result').scrollIntoView()", turn)
    page.shot("long-column-name-chart")
    turn.find_element(By.CSS_SELECTOR, "button.show-table").click()
    head, _ = page.table(turn)
    check(head == ["country", expr], "headers %r" % head)
    wrap = turn.find_element(By.CSS_SELECTOR, ".table-wrap")
    width = page.js("return arguments[0].querySelector('table').scrollWidth", wrap)
    check(width <= wrap.size["width"], "the table is %dpx wide in a view of %dpx" % (width, wrap.size["width"]))
    # Wrapped, and each of its lines no wider than 24rem.
    lines = page.js("""const b = arguments[0].querySelector('thead th:nth-child(2) button');
        return [b.getBoundingClientRect().width, b.getClientRects().length, b.offsetHeight];""", turn)
    check(lines[0] <= 24 * 16 + 1, "the long name's header is %r" % lines)
    page.js("arguments[0].querySelector('.result').scrollIntoView()", turn)
    page.shot("long-column-name")


def marks_the_spaces_at_a_texts_edges(t):
    # " Berlin" looked like "Berlin": a cell drew the spaces at a text's
    # start and end as nothing. Each run is now a faint box that says what
    # it is; the text is the same, and a row of plain text is unchanged.
    sql = ("SELECT 'plain' AS kind, 'Berlin' AS city, 'Lukas' AS name\n"
           "UNION ALL SELECT 'edges', ' Berlin', 'Lukas  '\n"
           "UNION ALL SELECT 'blank', '   ', 'Zoë'")
    page = other_page(t, "edges", [{"content": fence(sql)}, {"content": "Three rows."}])
    turn = page.ask("Show the cities with spaces")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    _, cells = page.table(turn)
    check(cells == [["plain", "Berlin", "Lukas"], ["edges", " Berlin", "Lukas  "], ["blank", "   ", "Zoë"]],
          "cells %r" % cells)
    marks = page.js("""
        return [...arguments[0].querySelectorAll('tbody tr')].map(tr => [...tr.children].map(td =>
            [...td.querySelectorAll('.ws')].map(w => [w.textContent, w.title,
                Math.round(w.getBoundingClientRect().width)])));""", turn)
    check(len(marks) == 3 and marks[0] == [[], [], []] and marks[1][0] == [] and marks[2][2] == [], "marks where none belong: %r" % marks)
    for (text, title, width), want in ((marks[1][1][0], (" ", "1 space at the start")),
                                       (marks[1][2][0], ("  ", "2 spaces at the end")),
                                       (marks[2][1][0], ("   ", "3 spaces, nothing else"))):
        check((text, title) == want and width >= 5, "mark %r, want %r, 5px wide at least" % ((text, title, width), want))
    heights = page.js("return [...arguments[0].querySelectorAll('tbody tr')].map(tr => tr.getBoundingClientRect().height)",
                      turn)
    check(max(heights) - min(heights) < 1, "the marks changed the rows' height: %r" % heights)
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("edge-spaces")


def keeps_the_line_breaks_of_a_question(t):
    # A question typed on several lines (Shift+Enter) was shown in one.
    page = other_page(t, "lines", [{"content": fence(SQL_COUNTRY)}, {"content": A_COUNTRY}])
    question = "How many customers are there\nin each country?\n  - most first"
    box = page.q("#question")
    box.click()
    box.send_keys("How many customers are there", Keys.SHIFT, Keys.ENTER, Keys.NULL,
                  "in each country?", Keys.SHIFT, Keys.ENTER, Keys.NULL, "  - most first")
    check(box.get_attribute("value") == question, "the box holds %r" % box.get_attribute("value"))
    box.send_keys(Keys.ENTER)
    turn = page.wait_done()
    shown = page.js("return arguments[0].querySelector('.q').innerText", turn)
    check(shown == question, "the question is shown as %r" % shown)
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("multi-line-question")


def downloads_csv_that_spreadsheets_read_as_utf8(t):
    # The CSV was UTF-8 without a byte-order mark, which Excel reads in the
    # machine's code page: "Zoë" became "ZoÃ«". It starts with the mark
    # now; Python reads it with encoding="utf-8-sig" (README).
    sql = "SELECT 'Zoë' AS name, city FROM customers WHERE id IN (17, 20) ORDER BY id"
    page = other_page(t, "csv8", [{"content": fence(sql)}, {"content": "Two cities."}])
    turn = page.ask("Which city do the customers 17 and 20 live in?")
    path = download(t, turn, "csv")
    data = open(path, "rb").read()
    want = "name,city\r\nZoë,Malmö\r\nZoë,Düsseldorf\r\n"
    check(data == b"\xef\xbb\xbf" + want.encode("utf-8"), "CSV %r" % data)
    with open(path, newline="", encoding="utf-8-sig") as f:
        got = list(csv.reader(f))
    check(got == [["name", "city"], ["Zoë", "Malmö"], ["Zoë", "Düsseldorf"]], "csv.reader read %r" % got)
    # The JSON download has no mark (RFC 8259 forbids one).
    raw = open(download(t, turn, "json"), "rb").read()
    check(raw.startswith(b"{") and json.loads(raw)["rows"][0] == ["Zoë", "Malmö"], "JSON %r" % raw[:80])


A_MARKDOWN = """Two customers match,
**Lukas** and *Zoë*:

- **Lukas Müller** lives in `Berlin`
- Zoë <script>window.pwned = 2</script> lives in <img src=x onerror="window.pwned=3">Malmö
- <a href="javascript:window.pwned=4">an HTML link</a>

1. [a script link](javascript:window.pwned=5), [a data link](data:text/html,<b>x</b>)
2. [the shop](https://example.com/shop?a=1&b=2) and [a path](/api/databases)

### Summary
<iframe src="/api/databases"></iframe>"""


def renders_the_answers_markdown_safely(t):
    # Models write Markdown in the answer in words; it showed raw ("**Lukas**").
    # Bold, lists and code are elements now, and nothing of the model's
    # becomes markup: its HTML is text, and a link goes to http(s) only.
    sql = "SELECT first_name, city FROM customers WHERE id IN (35, 17, 20) ORDER BY id"
    page = other_page(t, "markdown", [{"content": fence(sql)}, {"content": A_MARKDOWN}],
                         ("--max-rows", "2"))
    turn = page.ask("Which customers live in Berlin or Malmö?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    got = page.js("""
        const a = arguments[0].querySelector('.answer');
        const texts = (sel) => [...a.querySelectorAll(sel)].map(e => e.textContent);
        return {
            strong: texts('strong'), em: texts('em'), code: texts('code'), ul: texts('ul > li'),
            ol: texts('ol > li'), h: texts('.md-h'), text: a.textContent,
            links: [...a.querySelectorAll('a')].map(e => [e.textContent, e.getAttribute('href'), e.rel]),
            tags: [...new Set([...a.querySelectorAll('*')].map(e => e.localName))].sort(),
            on: [...a.querySelectorAll('*')].flatMap(e => [...e.attributes].map(x => x.name))
                .filter(n => n.startsWith('on') || n === 'style' || n === 'src'),
            note: texts('.answer-note'), inList: texts('li .answer-note, li')
                .some(s => s.includes('Note:')),
        };""", turn)
    check(got["strong"] == ["Lukas", "Lukas Müller"] and got["em"] == ["Zoë"], "bold and italics %r" % got)
    check(got["code"] == ["Berlin"], "code %r" % got["code"])
    check(len(got["ul"]) == 3 and len(got["ol"]) == 2 and got["h"] == ["Summary"], "lists %r" % got)
    check(got["tags"] == sorted(["a", "br", "code", "em", "li", "ol", "p", "span", "strong", "ul"]),
          "elements in the answer: %r" % got["tags"])
    check(not got["on"], "attributes from the model: %r" % got["on"])
    check(got["links"] == [["the shop", "https://example.com/shop?a=1&b=2", "noopener noreferrer nofollow"]],
          "links %r" % got["links"])
    for raw in ('<script>window.pwned = 2</script>', '<img src=x onerror="window.pwned=3">',
                '<a href="javascript:window.pwned=4">', "[a script link](javascript:window.pwned=5)",
                '<iframe src="/api/databases"></iframe>', "a path (/api/databases)"):
        check(raw in got["text"], "%r is not shown as text: %r" % (raw, got["text"]))
    for span in turn.find_elements(By.CSS_SELECTOR, ".answer .md-link-off"):
        span.click()
    time.sleep(0.3)
    check(page.js("return window.pwned === undefined"), "the answer ran script: %r" % page.js("return window.pwned"))
    check(page.d.current_url.startswith(page.url), "the page went to %s" % page.d.current_url)
    if t.servers.mode == "real":
        # askdb's note (the rows were cut at --max-rows) is a paragraph of
        # its own, not a line of the list's last item.
        check(len(got["note"]) == 1 and got["note"][0].startswith("Note: The result was cut off at 2 rows"),
              "the note %r" % got["note"])
        check(not got["inList"], "the note is in a list item: %r" % got["ol"])
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("answer-markdown")


def keeps_the_questions_of_two_tabs(t):
    # Each tab wrote back the history it had read when it loaded: a
    # question asked in one tab was dropped by the next one asked in the
    # other, and Up there never offered it.
    script = [{"content": fence(SQL_COUNTRY)}, {"content": A_COUNTRY},
              {"content": fence(SQL_PHONE)}, {"content": A_PHONE}]
    url = t.servers.start_other("tabs", script, ())
    d = t.page.d
    first = d.current_window_handle
    page = Page(d, url, t.page.shots)
    page.open()
    wait_for(lambda: page.qa("#schema-tree details"), "the schema")
    page.js("localStorage.removeItem('askdb.history')")
    page.open()
    wait_for(lambda: page.qa("#schema-tree details"), "the schema")
    d.switch_to.new_window("tab")
    second = d.current_window_handle
    try:
        page.open()
        wait_for(lambda: page.qa("#schema-tree details"), "the schema in the second tab")
        d.switch_to.window(first)
        page.ask(Q_COUNTRY)
        d.switch_to.window(second)
        page.ask(Q_PHONE)
        stored = page.js("return JSON.parse(localStorage.getItem('askdb.history'))")
        check(stored == [Q_COUNTRY, Q_PHONE], "history stored %r" % stored)
        d.switch_to.window(first)
        box = page.q("#question")
        box.click()
        box.send_keys(Keys.ARROW_UP)
        check(box.get_attribute("value") == Q_PHONE, "Up in the first tab gave %r" % box.get_attribute("value"))
        box.send_keys(Keys.ARROW_UP)
        check(box.get_attribute("value") == Q_COUNTRY, "Up twice gave %r" % box.get_attribute("value"))
        box.clear()
    finally:
        d.switch_to.window(second)
        d.close()
        d.switch_to.window(first)


def shows_a_new_answer_from_its_question(t):
    # The log followed a question only while within 120 px of its end, and
    # an answer's rows come at once, hundreds of pixels: the view stayed
    # on the earlier answer with one row of the new table showing.
    script = [{"content": fence("SELECT id, first_name, last_name, email, city FROM customers ORDER BY id")},
              {"content": "All 60 customers."},
              {"content": fence("SELECT id, first_name, email FROM customers ORDER BY id LIMIT 30")},
              {"content": "The first 30 customers."}]
    page = other_page(t, "follow", script)
    page.ask("List the customers")
    turn = page.ask("List the first 30 customers")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    time.sleep(0.3)
    view = page.js("""
        const log = document.querySelector('#log').getBoundingClientRect();
        const t = arguments[0];
        const q = t.querySelector('.q').getBoundingClientRect();
        const row = t.querySelector('tbody tr:nth-child(5)').getBoundingClientRect();
        return [log.top, log.bottom, q.top, row.bottom];""", turn)
    top, bottom, q_top, row_bottom = view
    check(top <= q_top < bottom, "the question is out of view: %r" % view)
    check(row_bottom <= bottom, "the fifth row of the answer is out of view: %r" % view)
    page.shot("follow")


def keeps_a_question_too_long_to_ask(t):
    # The server takes 8,192 characters a question. A longer one was sent
    # anyway: the box was emptied, the 400 came back, and the text was
    # neither in the box nor in the history (too long to keep) to shorten
    # it. The page counted UTF-8 bytes, and so kept back a question of
    # 4,200 "é" that the server (counting characters, as its OpenAPI
    # document does) takes; an emoji is one character, not String.length's 2.
    question = "Which customers wrote " + "é" * 8200 + "🙂?"
    page = t.page
    page.open()
    wait_for(lambda: page.qa("#schema-tree details"), "the schema")
    n = len(page.turns())
    box = page.q("#question")
    page.js("arguments[0].value = arguments[1]", box, question)
    box.send_keys(Keys.END, Keys.ENTER)
    time.sleep(0.5)
    check(len(page.turns()) == n, "the question was sent")
    check(box.get_attribute("value") == question, "the box holds %d characters" % len(box.get_attribute("value")))
    status = page.q("#ask-status").text
    check("8,192" in status and "8,224 characters" in status, "status %r" % status)
    page.shot("too-long")
    box.clear()


def says_when_the_words_could_not_be_written(t):
    # The SQL and rows came; the model failed on the answer in words: the
    # rows stand and a notice says the words are missing.
    page = other_page(t, "nowords", [{"content": fence(SQL_COUNTRY)},
                                     {"status": 400, "body": {"error": {"message": "no words today"}}}])
    turn = page.ask(Q_COUNTRY)
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    notes = [n.text for n in turn.find_elements(By.CSS_SELECTOR, ".notice")]
    check(any("could not be written" in n and "no words today" in n for n in notes), "notices %r" % notes)
    check(page.table(turn) or turn.find_elements(By.CSS_SELECTOR, "canvas"), "no rows shown")
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("no-words")



def shows_the_rows_while_the_words_are_written(t):
    # The rows are final before the model writes the words (3 s here):
    # they show at once, and the words' place says they are coming. A
    # Cancel while the words are written keeps the rows shown.
    page = other_page(t, "rowsfirst", [{"content": fence(SQL_COUNTRY)},
                                       {"content": A_COUNTRY, "delay_ms": 3000},
                                       {"content": fence(SQL_COUNTRY)},
                                       {"content": A_COUNTRY, "delay_ms": 20000}])
    cols, rows = rows_of(SQL_COUNTRY)
    turn = page.ask(Q_COUNTRY, wait=False)
    wait_for(lambda: turn.find_elements(By.CSS_SELECTOR, "canvas, table.rows"), "the rows before the words", 10)
    check(not turn.get_attribute("data-state"), "the question ended before the words")
    pending = turn.find_elements(By.CSS_SELECTOR, ".answer-pending")
    check(pending and pending[0].text == "Writing the answer in words…", "no place for the words: %r" %
          [p.text for p in pending])
    check(not turn.find_elements(By.CSS_SELECTOR, ".answer"), "an answer before the words")
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("rows-before-words")
    page.wait_done()
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    check(turn.find_element(By.CSS_SELECTOR, ".answer").text == A_COUNTRY, "no plain-English answer")
    check(not turn.find_elements(By.CSS_SELECTOR, ".answer-pending"), "the words' place stays")
    check(len(turn.find_elements(By.CSS_SELECTOR, ".result")) == 1 and
          len(turn.find_elements(By.CSS_SELECTOR, ".sql-box")) == 1, "the rows or SQL shown twice")
    # Cancelled while the words are written: the rows stay.
    turn = page.ask(Q_COUNTRY, wait=False)
    wait_for(lambda: turn.find_elements(By.CSS_SELECTOR, ".answer-pending") and
             turn.find_elements(By.CSS_SELECTOR, "canvas, table.rows"), "the rows and the words' place", 10)
    page.q("#cancel").click()
    wait_for(lambda: turn.get_attribute("data-state"), "the cancel", timeout=3)
    check(turn.get_attribute("data-state") == "cancelled", "state %s" % turn.get_attribute("data-state"))
    turn.find_element(By.CSS_SELECTOR, "button.show-table").click()
    head, cells = page.table(turn)
    check(head == cols and cells == [[fmt_num(v) for v in r] for r in rows], "rows after the cancel %r" % cells)
    check(not turn.find_elements(By.CSS_SELECTOR, ".answer-pending"), "the words' place stays after the cancel")
    notes = [n.text for n in turn.find_elements(By.CSS_SELECTOR, ".notice")]
    check(any("rows below are the answer" in n for n in notes), "notices %r" % notes)
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("rows-kept-after-cancel")


def says_a_follow_up_lost_its_conversation(t):
    # The server restarted between two questions: the follow-up is asked
    # without the first, and the page says so.
    page = other_page(t, "restart", [{"content": fence(SQL_COUNTRY)}, {"content": A_COUNTRY},
                                     {"content": fence(SQL_FOLLOW)}, {"content": A_FOLLOW}])
    first = page.ask(Q_COUNTRY)
    check(not [n for n in first.find_elements(By.CSS_SELECTOR, ".notice") if "no longer had" in n.text],
          "a first question is no lost follow-up")
    t.servers.restart_other("restart")
    turn = page.ask("And only those in Germany?")
    notes = [n.text for n in turn.find_elements(By.CSS_SELECTOR, ".notice")]
    check(any("no longer had this conversation" in n for n in notes), "notices %r" % notes)


says_a_follow_up_lost_its_conversation.real_only = True


def keeps_the_answers_when_the_database_changes(t):
    page = other_page(t, "switch", [{"content": fence(SQL_COUNTRY)}, {"content": A_COUNTRY}])
    page.ask(Q_COUNTRY)
    Select(page.q("#db")).select_by_value("shop_copy")
    wait_for(lambda: page.qa("#log .conv-divider"), "the divider")
    check(len(page.turns()) == 1, "the earlier answer is gone")
    check("shop_copy" in page.q("#log .conv-divider").text, "divider %r" % page.q("#log .conv-divider").text)
    Select(page.q("#db")).select_by_value("shop")


def keeps_a_question_the_page_could_not_ask(t):
    # The token prompt was cancelled: no database to ask. The question
    # stays in the box and the list (and the prompt) is asked for again.
    t.page.d.get(t.token_url + "/")
    t.page.js("sessionStorage.clear()")
    t.page.d.get(t.token_url + "/")
    wait_for(lambda: t.page.q("#token-dlg").is_displayed(), "the token prompt")
    t.page.q("#token-cancel").click()
    wait_for(lambda: not t.page.q("#token-dlg").is_displayed(), "the prompt to close")
    box = t.page.q("#question")
    # (Keys sent at once after the dialog closes can be lost: a person
    # clicks the box first.)
    box.click()
    wait_for(lambda: t.page.js("return document.activeElement.id") == "question", "the focus in the box")
    time.sleep(0.3)
    box.send_keys("How many orders are there?")
    check(box.get_attribute("value") == "How many orders are there?", "typing: %r" % box.get_attribute("value"))
    box.send_keys(Keys.ENTER)
    wait_for(lambda: t.page.q("#token-dlg").is_displayed(), "the token prompt again")
    check(box.get_attribute("value") == "How many orders are there?", "the box: %r" % box.get_attribute("value"))
    check(not t.page.turns(), "a question was started")
    t.page.q("#token-in").send_keys("s3cret")
    t.page.q("#token-ok").click()
    wait_for(lambda: t.page.qa("#schema-tree details"), "the schema after the token")
    check(box.get_attribute("value") == "How many orders are there?", "the box after: %r" % box.get_attribute("value"))
    box.clear()


keeps_a_question_the_page_could_not_ask.console_allows = ("status of 401",)


RECORD_STATUS_JS = """
window.said = [];
new MutationObserver((recs) => { for (const r of recs)
        window.said.push(r.addedNodes.length ? r.addedNodes[0].textContent : ''); })
    .observe(document.querySelector('#ask-status'), { childList: true, characterData: true, subtree: true });
"""


def said(page, question, **kw):
    """Ask question on page; (the turn, each text the status line, a live
    region, was given while it ran)."""
    page.js("window.said = []")
    turn = page.ask(question, **kw)
    return turn, page.js("return window.said")


def says_the_start_and_the_end_of_a_question(t):
    # The status line is a live region: it said every step, some ten a
    # question ("Read the schema: 9 tables, 1 ms", "Generating SQL", ...),
    # and at the end "Answered" alone. It says two things now: that the
    # question is asked, and how it ended, with the rows it gave.
    bad = "SELECT shoe_size FROM customers"
    # (An empty result is doubted and asked again: the last entry repeats.)
    page = other_page(t, "said", [{"content": fence(SQL_COUNTRY)},
                                  {"content": fence("SELECT COUNT(*) AS n FROM customers")},
                                  {"content": fence(bad)}, {"content": fence(bad)}, {"content": fence(bad)},
                                  {"content": fence("SELECT id FROM customers WHERE id < 0"), "repeat": True}])
    page.q("#want-answer").click()
    check(not page.q("#want-answer").is_selected(), "the answer in words is still asked for")
    page.js(RECORD_STATUS_JS)
    _, rows = rows_of(SQL_COUNTRY)
    for question, want in ((Q_COUNTRY, "Answered: %d rows" % len(rows)),
                           ("How many customers are there?", "Answered: 1 row"),
                           (Q_BAD, None),
                           ("Which customers have a negative id?", "Answered: no rows")):
        turn, texts = said(page, question)
        if want is None:
            check(turn.get_attribute("data-state") == "failed", "state %s" % turn.get_attribute("data-state"))
            msg = page.js("return arguments[0].querySelector('.error-box .error-msg').textContent", turn)
            want = "No answer: " + msg.split("\n")[0]
            check("\n" not in want and len(want) > len("No answer: "), "a failure says %r" % want)
        else:
            check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
        check(texts == ["Asking…", want], "%r: the status line said %r" % (question, texts))
        check(len(page.steps(turn)) > 5, "the steps are not all shown: %r" % page.steps(turn))
    page.q("#want-answer").click()


def says_when_the_server_is_gone(t):
    # askdb serve stopped under the page: the page said the browser's
    # words, "Failed to fetch" (Chromium) or "NetworkError when attempting
    # to fetch resource" (Firefox), which name neither askdb nor what to
    # do. It names the server and asks whether it still runs: for a
    # question cut in the middle, a question asked afterwards and the
    # schema of the database picked afterwards.
    page = other_page(t, "gone", [{"content": fence("SELECT name FROM products"), "delay_ms": 20000}])
    turn = page.ask(Q_SLOW, wait=False)
    wait_for(lambda: any("Generating SQL" in s for s in page.steps(turn)), "the model to be asked")
    t.servers.kill_other("gone")
    page.wait_done(10)
    check(turn.get_attribute("data-state") == "failed", "state %s" % turn.get_attribute("data-state"))
    origin = page.url
    msg = turn.find_element(By.CSS_SELECTOR, ".error-box .error-msg").text
    check(msg == "askdb serve at %s stopped answering before the answer was complete. Is it still running?"
          % origin, "a question cut short: %r" % msg)
    gone = "askdb serve is not answering at %s. Is it still running?" % origin
    page.js(RECORD_STATUS_JS)
    turn, texts = said(page, Q_COUNTRY)
    check(turn.get_attribute("data-state") == "failed", "state %s" % turn.get_attribute("data-state"))
    msg = turn.find_element(By.CSS_SELECTOR, ".error-box .error-msg").text
    check(msg == gone, "a question asked afterwards: %r" % msg)
    check(texts[-1] == "No answer: " + gone, "the status line said %r" % texts)
    Select(page.q("#db")).select_by_value("shop_copy")
    box = wait_for(lambda: page.qa("#schema-tree .error-box") and page.q("#schema-tree .error-box"), "the schema's error")
    check(box.text == "Cannot read the schema of shop_copy\n" + gone, "the schema: %r" % box.text)
    page.shot("server-gone")


says_when_the_server_is_gone.console_allows = ("ERR_CONNECTION_REFUSED", "ERR_INCOMPLETE_CHUNKED_ENCODING",
                                               "ERR_CONNECTION_RESET", "ERR_EMPTY_RESPONSE")


def escape_closes_the_schema_on_a_phone(t):
    # On a phone the schema opens over the page by its button; Escape did
    # not close it (the button alone did). Escape closes it now and puts
    # the focus back on the button; with text in the search it first
    # clears the search, as it does in any search box.
    t.page.d.set_window_size(360, 800)
    try:
        t.page.open()
        wait_for(lambda: t.page.qa("#schema-tree details"), "the schema")
        tog = t.page.q("#schema-toggle")
        schema = t.page.q("#schema")
        tog.click()
        check(schema.is_displayed(), "the Schema button does not open it")
        check(t.page.js("return document.activeElement.id") == "schema-search", "the focus is not in the search")
        search = t.page.q("#schema-search")
        search.send_keys("cust")
        search.send_keys(Keys.ESCAPE)
        check(search.get_attribute("value") == "" and schema.is_displayed(),
              "Escape in the search: %r, open %s" % (search.get_attribute("value"), schema.is_displayed()))
        search.send_keys(Keys.ESCAPE)
        check(not schema.is_displayed(), "Escape does not close the schema")
        check(tog.get_attribute("aria-expanded") == "false", "aria-expanded %s" % tog.get_attribute("aria-expanded"))
        check(t.page.js("return document.activeElement.id") == "schema-toggle",
              "the focus is on %r" % t.page.js("return document.activeElement.outerHTML.slice(0, 60)"))
        # From a name in the tree too.
        tog.click()
        t.page.js("document.querySelector('#schema-tree details summary button.name').focus()")
        t.page.d.switch_to.active_element.send_keys(Keys.ESCAPE)
        check(not schema.is_displayed(), "Escape on a table's name does not close the schema")
        check(t.page.js("return document.activeElement.id") == "schema-toggle", "the focus is not on the button")
        # From the question box, typed in while the schema is open, the
        # focus stays in the box.
        tog.click()
        box = t.page.q("#question")
        box.click()
        box.send_keys("count by", Keys.ESCAPE)
        check(not schema.is_displayed(), "Escape in the question box does not close the schema")
        check(t.page.js("return document.activeElement.id") == "question" and
              box.get_attribute("value") == "count by", "Escape in the box took the focus or the text away")
        box.clear()
        t.page.shot("phone-schema-closed")
    finally:
        t.page.d.set_window_size(1366, 900)


def says_why_there_is_no_chart(t):
    # The Chart button of a result it cannot draw was disabled with its
    # reason in a title: a tooltip no touch screen or keyboard shows (a
    # disabled button takes no focus). The reason is a short note beside
    # it now, and the button is described by it.
    page = other_page(t, "nochart", [{"content": fence("SELECT COUNT(*) AS n FROM customers")},
                                     {"content": "There are 60 customers."},
                                     {"content": fence("SELECT first_name, city FROM customers ORDER BY id LIMIT 3")},
                                     {"content": "Three customers."},
                                     {"content": fence(SQL_COUNTRY)}, {"content": A_COUNTRY}])
    for question, want in (("How many customers are there?", "No chart: a single row"),
                           ("Where do the first three customers live?",
                            "No chart: it needs a text or date column and 1 to 4 number columns")):
        turn = page.ask(question)
        check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
        btn = turn.find_element(By.CSS_SELECTOR, "button.show-chart")
        check(not btn.is_enabled(), "the Chart button is enabled")
        note = page.js("""const id = arguments[0].getAttribute('aria-describedby');
            const n = id && document.getElementById(id); return n && [n.textContent, n.checkVisibility()];""", btn)
        check(note == [want, True], "the Chart button is described by %r" % note)
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("no-chart")
    # A result it draws has no such note.
    turn = page.ask(Q_COUNTRY)
    btn = turn.find_element(By.CSS_SELECTOR, "button.show-chart")
    check(btn.is_enabled() and not btn.get_attribute("aria-describedby") and not turn.find_elements(
        By.CSS_SELECTOR, ".chart-off"), "a chart and a note why there is none: %r" % btn.get_attribute("outerHTML"))


def says_the_count_of_a_one_page_result_once(t):
    # A result of one page said its count twice, one line above the other:
    # "Rows 1–3 of 3" under the table, then "3 rows · 9 ms · 2 model
    # calls" ("Rows 1–1 of 1" for one row). The pager is for more pages.
    page = other_page(t, "onepage", [{"content": fence("SELECT first_name, city FROM customers ORDER BY id LIMIT 3")},
                                     {"content": "Three customers."},
                                     {"content": fence("SELECT id, first_name FROM customers ORDER BY id")},
                                     {"content": "All of them."}])
    turn = page.ask("Where do the first three customers live?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    pager = [p.text for p in turn.find_elements(By.CSS_SELECTOR, ".pager") if p.is_displayed()]
    check(not pager, "a result of one page has a pager: %r" % pager)
    summary = turn.find_element(By.CSS_SELECTOR, ".summary").text
    check(summary.startswith("3 rows · "), "the summary says %r" % summary)
    # More than a page: the pager says which rows are shown.
    turn = page.ask("List every customer")
    info = turn.find_element(By.CSS_SELECTOR, ".pager span")
    check(info.is_displayed() and info.text == "Rows 1–25 of 60", "the pager of 60 rows: %r" % info.text)


HEADER_ROWS_JS = """
const kids = [...document.querySelector('header.top').children].filter((e) => e.checkVisibility() &&
    e.getBoundingClientRect().width > 0);
const rows = [];
for (const e of kids) {
    const r = e.getBoundingClientRect();
    if (!rows.some((top) => r.top < top.bottom - 2 && r.bottom > top.top + 2)) rows.push(r);
}
return [rows.length, document.querySelector('header.top').getBoundingClientRect().height];
"""


def fits_the_header_in_two_rows_at_320_px(t):
    # 320 px (an iPhone SE, a big system font): the header took three
    # rows of the small screen (name and database, then the Schema and
    # New conversation buttons, then the theme's). At most two now, every
    # control shown and in the screen.
    t.page.d.set_window_size(320, 700)
    try:
        t.page.open()
        wait_for(lambda: t.page.qa("#schema-tree details"), "the schema")
        check(t.page.js("return window.innerWidth") == 320, "the window is %d px wide" % t.page.js("return window.innerWidth"))
        rows, height = t.page.js(HEADER_ROWS_JS)
        t.page.shot("header-320")
        check(rows <= 2, "the header takes %d rows (%d px)" % (rows, height))
        for sel in ("#db", "#schema-toggle", "#new-conv", "#theme"):
            r = t.page.js("const r = document.querySelector(arguments[0]).getBoundingClientRect();"
                          "return [r.left, r.right, r.width]", sel)
            check(t.page.q(sel).is_displayed() and r[0] >= 0 and r[1] <= 320 and r[2] >= (120 if sel == "#db" else 24),
                  "%s is not all in the screen, or too narrow: %r" % (sel, r))
        over = t.page.js("return document.documentElement.scrollWidth - window.innerWidth")
        check(over <= 0, "the page is %d px wider than the screen" % over)
    finally:
        t.page.d.set_window_size(1366, 900)


def lines_up_the_decimals_of_money(t):
    # A money column showed 49.8 beside 111.72 (and 50 for 50.00): the
    # number's shortest text. A column whose numbers have at most two
    # decimals shows them all with its most (49.80, 50.00); one with more
    # (a ratio) is shown as it is. Nothing is rounded, and the downloads
    # keep the values as the server sent them.
    sql = ("SELECT 'a' AS item, 49.8 AS price, 0.125 AS share, 3 AS qty, 1.5 AS tax\n"
           "UNION ALL SELECT 'b', 111.72, 0.5, 4, 2\n"
           "UNION ALL SELECT 'c', 50, 0.25, 5, NULL")
    page = other_page(t, "money", [{"content": fence(sql)}, {"content": "Three items."}])
    turn = page.ask("What do the items cost?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    turn.find_element(By.CSS_SELECTOR, "button.show-table").click()
    head, cells = page.table(turn)
    want = [["a", "49.80", "0.125", "3", "1.5"],
            ["b", "111.72", "0.5", "4", "2.0"],
            ["c", "50.00", "0.25", "5", "NULL"]]
    check(cells == want, "cells %r" % cells)
    th = turn.find_element(By.CSS_SELECTOR, "thead th:nth-child(2) button")
    th.click()
    _, cells = page.table(turn)
    check([r[1] for r in cells] == ["49.80", "50.00", "111.72"], "sorted by price %r" % cells)
    data = open(download(t, turn, "csv"), "rb").read()
    check(data == b"\xef\xbb\xbfitem,price,share,qty,tax\r\na,49.8,0.125,3,1.5\r\nb,111.72,0.5,4,2\r\n"
          b"c,50,0.25,5,\r\n", "CSV %r" % data)
    doc = json.load(open(download(t, turn, "json")))
    check(doc["rows"] == [["a", 49.8, 0.125, 3, 1.5], ["b", 111.72, 0.5, 4, 2], ["c", 50, 0.25, 5, None]],
          "JSON %r" % doc["rows"])
    page.js("arguments[0].scrollIntoView()", turn.find_element(By.CSS_SELECTOR, ".result"))
    page.shot("money")


def offers_no_chart_for_long_text(t):
    # A sentence about each customer with the count of their orders: the
    # sentences labelled a bar chart, shown first, each label 60 to 70
    # characters cut short or turned on its side under its bar. A text
    # column whose values are mostly over 40 characters labels no chart;
    # names (a product's, 27 characters at most) still do.
    sentences = ("SELECT c.first_name || ' ' || c.last_name || ' from ' || COALESCE(c.city, 'an unknown city')"
                 " || ' joined on ' || c.signup_date || ' as a ' || c.loyalty_tier || ' member' AS note,\n"
                 "(SELECT COUNT(*) FROM orders o WHERE o.customer_id = c.id) AS orders\n"
                 "FROM customers c ORDER BY c.id LIMIT 8")
    names = "SELECT name, price FROM products ORDER BY price DESC LIMIT 8"
    # Two columns of sentences and no number: the missing numbers are the
    # reason, said first, not the length of the text.
    two = ("SELECT c.first_name || ' ' || c.last_name || ' from ' || COALESCE(c.city, 'an unknown city')"
           " || ' joined on ' || c.signup_date || ' as a ' || c.loyalty_tier || ' member' AS note,\n"
           "'Their e-mail address, ' || c.email || ', is on file' AS contact\n"
           "FROM customers c ORDER BY c.id LIMIT 8")
    page = other_page(t, "longtext", [{"content": fence(sentences)}, {"content": "Eight customers."},
                                      {"content": fence(names)}, {"content": "The dearest products."},
                                      {"content": fence(two)}, {"content": "Eight customers in words."}])
    turn = page.ask("Tell me about the first eight customers and their orders")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    head, cells = page.table(turn)
    check(head == ["note", "orders"] and len(cells) == 8 and all(len(r[0]) > 40 for r in cells),
          "the table: %r, %r" % (head, cells[:2]))
    check(not turn.find_elements(By.CSS_SELECTOR, ".chart-wrap"), "a chart was drawn for sentences")
    btn = turn.find_element(By.CSS_SELECTOR, "button.show-chart")
    check(not btn.is_enabled(), "a chart is offered for sentences: %r" % btn.text)
    note = page.js("""const id = arguments[0].getAttribute('aria-describedby');
        const n = id && document.getElementById(id); return n && n.textContent;""", btn)
    check(note == "No chart: its text is too long to label a chart (over 40 characters)",
          "the Chart button is described by %r" % note)
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("no-chart-long-text")
    turn = page.ask("What are the dearest products?")
    btn = turn.find_element(By.CSS_SELECTOR, "button.show-chart")
    check(btn.is_enabled() and btn.text == "Chart (bar)" and btn.get_attribute("aria-pressed") == "true",
          "no bar chart for product names: %r" % btn.get_attribute("outerHTML"))
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("chart-names")
    turn = page.ask("Describe the first eight customers and how to reach them")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    head, cells = page.table(turn)
    check(head == ["note", "contact"] and len(cells) == 8 and all(len(v) > 40 for r in cells for v in r),
          "the table: %r, %r" % (head, cells[:2]))
    btn = turn.find_element(By.CSS_SELECTOR, "button.show-chart")
    note = page.js("""const id = arguments[0].getAttribute('aria-describedby');
        const n = id && document.getElementById(id); return n && n.textContent;""", btn)
    check(not btn.is_enabled() and
          note == "No chart: it needs a text or date column and 1 to 4 number columns",
          "two columns of sentences, no number: the Chart button is described by %r" % note)


def shows_the_plan_of_a_question(t):
    # askdb serve --plan: a question with a cue of several steps ("more
    # than the average") is planned; the plan event says how many tasks
    # (a number: the timeline read it as a list and showed none). One
    # without such a cue says needed:false, no plan made: shown as
    # "Planned" it claimed a plan that never was.
    plan = json.dumps({"tasks": [{"id": 1, "task": "the average a customer spent", "depends_on": []},
                                 {"id": 2, "task": "the customers who spent more than it", "depends_on": [1]}]})
    avg = "SELECT AVG(spent) AS avg_spent FROM (SELECT SUM(total) AS spent FROM orders GROUP BY customer_id)"
    above = ("SELECT customer_id, SUM(total) AS spent FROM orders GROUP BY customer_id\n"
             "HAVING SUM(total) > (%s) ORDER BY spent DESC" % avg)
    page = other_page(t, "plan", [{"content": plan}, {"content": fence(avg)}, {"content": fence(above)},
                                  {"content": "These customers spent more than the average."},
                                  {"content": fence("SELECT COUNT(*) AS n FROM customers")},
                                  {"content": "There are 60 customers."},
                                  {"content": json.dumps({"tasks": []})},
                                  {"content": fence("SELECT name, price FROM products\n"
                                                    "WHERE price > (SELECT AVG(price) FROM products) ORDER BY price")},
                                  {"content": "These products cost more than the average."}], ("--plan",))
    turn = page.ask("Which customers spent more than the average customer?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    steps = page.steps(turn)
    planned = [s for s in steps if "Planned" in s]
    check(len(planned) == 1 and planned[0].endswith("Planned \u2014 2 tasks"), "the plan's step: %r" % steps)
    # Its model calls in words, not by the agent's names (plan, plan_task).
    check(not any("_" in s or "(plan" in s for s in steps) and
          any(s.endswith("Asking the model for a plan") for s in steps) and
          any(s.endswith("Generating SQL for a step of the plan") for s in steps),
          "the plan's calls of the model: %r" % steps)
    turn.find_element(By.CSS_SELECTOR, ".steps-toggle").click()
    page.js("arguments[0].scrollIntoView()", turn)
    page.shot("plan")
    turn = page.ask("How many customers are there?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    steps = page.steps(turn)
    check(not any("Planned" in s for s in steps) and any(s.endswith("No plan needed") for s in steps),
          "a question that needed no plan: %r" % steps)
    # A plan of no tasks (the model: one query answers it) is no "0 tasks".
    turn = page.ask("Which products cost more than the average product?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    planned = [s for s in page.steps(turn) if "Planned" in s]
    check(len(planned) == 1 and planned[0].endswith("Planned \u2014 one query answers it"),
          "a plan of no tasks: %r" % planned)


shows_the_plan_of_a_question.real_only = True


def leaves_the_focus_where_the_reader_put_it(t):
    # While a question ran the reader went to the schema's search and
    # typed there; the answer came, the page put the focus back in the
    # question box, and the rest of the word went into the question.
    page = other_page(t, "focus", [{"content": fence("SELECT COUNT(*) AS n FROM orders"), "delay_ms": 1500},
                                   {"content": "250 orders."}])
    turn = page.ask("How many orders are there?", wait=False)
    search = page.q("#schema-search")
    search.click()
    search.send_keys("ord")
    check(not turn.get_attribute("data-state"), "the answer came before the search was typed")
    page.wait_done()
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    search = page.d.switch_to.active_element
    search.send_keys("ers")
    check(page.q("#schema-search").get_attribute("value") == "orders" and page.q("#question").get_attribute("value") == "",
          "typed after the answer came: the search %r, the question %r" %
          (page.q("#schema-search").get_attribute("value"), page.q("#question").get_attribute("value")))
    page.q("#schema-search").clear()


def stub_ask(page, events):
    """The page's next POST /api/ask is answered in the browser itself,
    with these (event, data) pairs as its text/event-stream: for events
    that askdb serve sends only with an engine the tests do not run
    (PostgreSQL's fixes). Later requests go to the server again."""
    body = "".join("event: %s\ndata: %s\n\n" % (name, json.dumps(data)) for name, data in events)
    page.js("""
        const body = arguments[0];
        const real = window.fetch;
        window.fetch = (url, opts) => {
            if (url !== '/api/ask') return real(url, opts);
            window.fetch = real;
            return Promise.resolve(new Response(body, { status: 200,
                headers: { 'Content-Type': 'text/event-stream', 'X-Request-Id': 'stub' } }));
        };""", body)


def labels_each_kind_of_fix(t):
    # PostgreSQL refuses a number compared with text; askdb casts both
    # sides to text without asking the model (a fix of kind "cast"). The
    # timeline called that "Fixed a column's table", the requalify fix.
    t.page.open()
    wait_for(lambda: t.page.qa("#schema-tree details"), "the schema")
    sql = "SELECT COUNT(*) AS n FROM orders o JOIN customers c ON CAST(c.id AS TEXT) = CAST(o.ref AS TEXT)"
    stub_ask(t.page, [
        ("step", {"step": "fix", "t_ms": 5, "kind": "cast", "candidate": 1, "ok": True,
                  "changes": "c.id = o.ref compared as text", "from": "SELECT ...", "sql": sql}),
        ("step", {"step": "validate", "t_ms": 6, "ok": True, "candidates": ["none"]}),
        ("sql", {"sql": sql}),
        ("rows", {"columns": ["n"], "rows": [[3]], "row_count": 1, "truncated": False}),
        ("done", {"status": "ok", "sql": sql, "row_count": 1, "attempts": []})])
    turn = t.page.ask("How many orders have a customer's reference?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    steps = t.page.steps(turn)
    fix = [s for s in steps if "compared as text" in s]
    check(len(fix) == 1 and fix[0].endswith("Cast a comparison to text \u2014 c.id = o.ref compared as text"), "the cast fix's step: %r" % steps)
    # A fix the engine still refuses (ok false) did not stand: the attempt
    # fails after it. A check mark beside it said it had worked.
    stub_ask(t.page, [
        ("step", {"step": "fix", "t_ms": 5, "kind": "cast", "candidate": 1, "ok": False,
                  "changes": "c.id = o.ref compared as text", "from": "SELECT ...", "sql": sql}),
        ("step", {"step": "validate", "t_ms": 6, "ok": False, "candidates": ["type_mismatch"]}),
        ("error", {"error": {"code": "no_sql", "message": "no valid SQL after 1 attempt"}, "attempts": []}),
        ("done", {"status": "no_sql", "sql": None, "error": "no valid SQL after 1 attempt", "attempts": []})])
    turn = t.page.ask("How many orders have a customer's reference, again?")
    check(turn.get_attribute("data-state") == "failed", "state %s" % turn.get_attribute("data-state"))
    fix = t.page.js("""return [...arguments[0].querySelectorAll('.steps li')]
        .filter(li => li.textContent.includes('compared as text')).map(li => [li.className, li.textContent]);""", turn)
    check(len(fix) == 1 and fix[0][0] == "warn" and "the engine still refuses it" in fix[0][1],
          "a fix that did not stand: %r" % fix)


def says_what_a_check_doubted_in_words(t):
    # A check's kind is the agent's name for it (join_not_fk); its hint
    # says the same in words. The step showed "join_not_fk: ..." first.
    # A check that could not run (out of memory) doubted nothing: the step
    # called it a doubt, with no word of why.
    sql = "SELECT COUNT(*) AS n FROM orders"
    hint = "orders.id is joined to products.id, which is no foreign key"
    stub_ask(t.page, [
        ("step", {"step": "check", "t_ms": 5, "kind": "join_not_fk", "hint": hint}),
        ("step", {"step": "check", "t_ms": 6, "error": "out of memory"}),
        ("sql", {"sql": sql}),
        ("rows", {"columns": ["n"], "rows": [[250]], "row_count": 1, "truncated": False}),
        ("done", {"status": "ok", "sql": sql, "row_count": 1, "attempts": []})])
    turn = t.page.ask("How many orders are there, checked?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    steps = t.page.steps(turn)
    check(any(s.endswith("A check doubted the result \u2014 " + hint) for s in steps) and
          not any("join_not_fk" in s for s in steps), "the check's step: %r" % steps)
    check(any(s.endswith("The result went unchecked \u2014 out of memory") for s in steps),
          "a check that could not run: %r" % steps)
    # A doubted winner whose place another candidate took (instead):
    # said so, not left as a doubt with a repair to come.
    stub_ask(t.page, [
        ("step", {"step": "check", "t_ms": 5, "kind": "idle_join", "hint": hint, "instead": 3}),
        ("sql", {"sql": sql}),
        ("rows", {"columns": ["n"], "rows": [[250]], "row_count": 1, "truncated": False}),
        ("done", {"status": "ok", "sql": sql, "row_count": 1, "attempts": []})])
    turn = t.page.ask("How many orders are there, checked again?")
    steps = t.page.steps(turn)
    check(any(s.endswith("A check doubted the result; candidate 3, which no check doubts, stands instead \u2014 " + hint)
              for s in steps), "the candidate taken instead: %r" % steps)
    turn.find_element(By.CSS_SELECTOR, ".steps-toggle").click()
    t.page.shot("clean-candidate")


def counts_the_values_found_in_words(t):
    # askdb serve --values: one value of the data named in the question
    # was "1 matches".
    sql = "SELECT COUNT(*) AS n FROM customers WHERE city = 'Berlin'"
    stub_ask(t.page, [
        ("step", {"step": "values", "t_ms": 5, "matches": 1, "ms": 1,
                  "found": [{"table": "customers", "column": "city", "value": "Berlin",
                             "phrase": "berlin", "exact": True}]}),
        ("sql", {"sql": sql}),
        ("rows", {"columns": ["n"], "rows": [[4]], "row_count": 1, "truncated": False}),
        ("done", {"status": "ok", "sql": sql, "row_count": 1, "attempts": []})])
    turn = t.page.ask("How many customers live in Berlin?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    steps = t.page.steps(turn)
    check(any(s.endswith("Looked up values \u2014 1 match") for s in steps), "the values' step: %r" % steps)


def says_when_it_was_no_question_about_the_data(t):
    # A greeting is no question about the data: askdb replies with what
    # it can answer, and the status line, a live region, said "Answered".
    t.page.open()
    wait_for(lambda: t.page.qa("#schema-tree details"), "the schema")
    before = len(t.servers.requests())
    turn = t.page.ask("hello there")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    check(len(t.servers.requests()) == before, "the model was asked about a greeting")
    check("Ask me a question" in turn.find_element(By.CSS_SELECTOR, ".answer").text, "the reply %r" %
          turn.find_element(By.CSS_SELECTOR, ".answer").text)
    status = t.page.q("#ask-status").text
    check(status == "Not a question about the data: see the reply", "status %r" % status)


says_when_it_was_no_question_about_the_data.real_only = True


def says_what_the_model_made_of_the_question(t):
    # No name of the data in the question: the model is asked whether it
    # is one about the data. Its yes was "Checked the question — the
    # model", half a sentence (its no reads "the model: no table holds it").
    sql = "SELECT COUNT(*) AS n FROM orders"
    stub_ask(t.page, [
        ("step", {"step": "qcheck", "t_ms": 5, "question": True, "why": "the model"}),
        ("sql", {"sql": sql}),
        ("rows", {"columns": ["n"], "rows": [[250]], "row_count": 1, "truncated": False}),
        ("done", {"status": "ok", "sql": sql, "row_count": 1, "attempts": []})])
    turn = t.page.ask("How busy were we?")
    check(turn.get_attribute("data-state") == "done", "state %s" % turn.get_attribute("data-state"))
    steps = t.page.steps(turn)
    check(any(s.endswith("Checked the question \u2014 the model: a question about the data") for s in steps),
          "the question's check: %r" % steps)


def downloads_blobs_as_hex_literals(t):
    # A blob went into the CSV as bare hex ("0123"), which a spreadsheet
    # reads as the number 123; it is written as `askdb sql --format csv`
    # writes it now: X'0123'. The JSON download keeps the object.
    sql = "SELECT city, X'01ab' AS tag FROM customers WHERE id = 17"
    page = other_page(t, "blobcsv", [{"content": fence(sql)}, {"content": "One tag."}])
    turn = page.ask("What is the tag of customer 17?")
    data = open(download(t, turn, "csv"), "rb").read()
    check(data == b"\xef\xbb\xbfcity,tag\r\nMalm\xc3\xb6,X'01AB'\r\n", "CSV %r" % data)
    doc = json.load(open(download(t, turn, "json")))
    check(doc["rows"] == [["Malmö", {"blob_hex": "01ab"}]], "JSON %r" % doc["rows"])


TESTS = [page_lists_databases_and_schema, serves_every_file_of_the_page_as_built,
         loads_nothing_from_elsewhere, asks_and_streams_the_steps, sorts_the_table_by_a_column,
         downloads_the_rows_as_csv, copies_the_sql, asks_a_follow_up_in_the_same_conversation,
         draws_a_line_chart_for_dates, shows_null_apart_from_empty_text_and_pages,
         explains_a_failure_with_each_attempt, shows_its_place_in_the_queue, cancels_a_running_question,
         up_arrow_recalls_earlier_questions, switches_to_dark_and_back, everything_has_a_name_and_keys_work,
         keeps_what_was_typed_while_a_question_ran, fits_a_phone, shows_the_vote_of_the_candidates,
         says_when_the_rows_were_cut, asks_for_a_token_when_the_server_wants_one,
         keeps_the_focus_when_asked_with_the_button, escape_in_the_schema_search_clears_it_only,
         shows_a_listing_as_a_table_first, turns_the_pages_from_the_top_with_the_keyboard,
         keeps_big_integers_exact, wraps_long_text_in_its_cell, marks_the_spaces_at_a_texts_edges,
         keeps_the_line_breaks_of_a_question, downloads_csv_that_spreadsheets_read_as_utf8,
         renders_the_answers_markdown_safely, keeps_the_questions_of_two_tabs,
         shows_a_new_answer_from_its_question, keeps_a_question_too_long_to_ask,
         says_when_the_words_could_not_be_written, shows_the_rows_while_the_words_are_written,
         says_once_that_the_model_is_down, says_that_askdb_never_changes_the_data,
         says_a_follow_up_lost_its_conversation, keeps_the_answers_when_the_database_changes,
         keeps_a_question_the_page_could_not_ask, says_the_start_and_the_end_of_a_question,
         says_when_the_server_is_gone, escape_closes_the_schema_on_a_phone,
         says_why_there_is_no_chart, fits_the_header_in_two_rows_at_320_px,
         lines_up_the_decimals_of_money, says_the_count_of_a_one_page_result_once,
         offers_no_chart_for_long_text, shows_the_plan_of_a_question, labels_each_kind_of_fix,
         wraps_a_long_column_name, leaves_the_focus_where_the_reader_put_it,
         says_what_a_check_doubted_in_words, counts_the_values_found_in_words,
         says_when_it_was_no_question_about_the_data, says_what_the_model_made_of_the_question,
         downloads_blobs_as_hex_literals]


class Run:
    pass


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", choices=("real", "mock"), required=True)
    ap.add_argument("--shots", default=os.path.join(ROOT, "build", "screenshots"))
    ap.add_argument("--filter", help="run the tests whose name contains this")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args(argv[1:])
    if args.server == "real":
        for v in ("ASKDB", "FAKE_LLM"):
            if not os.environ.get(v):
                print("browser_test.py: %s is not set" % v, file=sys.stderr)
                return 2
    tmp = tempfile.mkdtemp(prefix="askdb-web.")
    copy = os.path.join(tmp, "shop_copy.db")
    shutil.copy(SHOP, copy)
    if os.path.isdir(args.shots):
        for f in os.listdir(args.shots):
            if f.endswith(".png"):
                os.unlink(os.path.join(args.shots, f))
    t = Run()
    t.downloads = os.path.join(tmp, "downloads")
    os.makedirs(t.downloads)
    servers = d = None
    passed = failed = 0
    try:
        servers = Servers(args.server, tmp, [("shop", SHOP), ("shop_copy", copy)])
        t.servers = servers
        t.token_url = servers.start_with_token("s3cret")
        d = browser(t.downloads)
        t.page = Page(d, servers.url, args.shots)
        # The first test opens the page; a filter may leave it out.
        if args.filter:
            t.page.open()
        for test in TESTS:
            if args.filter and args.filter not in test.__name__:
                continue
            if getattr(test, "real_only", False) and args.server != "real":
                print("skip %s: it needs the real server (the mock does not do what it tests)" % test.__name__, flush=True)
                continue
            try:
                test(t)
                errs = t.page.console_errors(getattr(test, "console_allows", ()))
                check(not errs, "errors in the browser console: %r" % errs[:3])
                print("ok %s" % test.__name__, flush=True)
                passed += 1
            except Exception as e:  # a failed check or a broken page alike
                failed += 1
                reason = str(e).splitlines()[0] if str(e) else type(e).__name__
                print("FAIL %s: %s" % (test.__name__, reason[:600]), flush=True)
                if not isinstance(e, Failed):
                    traceback.print_exc(limit=3)
                try:
                    t.page.shot("fail-" + test.__name__)
                except WebDriverException:
                    pass
    except Exception as e:
        print("browser_test.py: %s" % e, file=sys.stderr)
        failed += 1
    finally:
        if d:
            d.quit()
        if servers:
            servers.close()
            if failed:
                err = open(os.path.join(tmp, "server.err")).read()
                if err.strip():
                    print("server stderr (last lines):\n  " + "\n  ".join(err.splitlines()[-15:]))
        if args.keep:
            print("browser_test.py: kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    print("screenshots: %s" % args.shots)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
