"""The table display: the state it shows, its server, `play --display`, and the page itself
in a real browser (Debian's headless chromium, driven by selenium)."""

import contextlib
import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from companion.display.live import TableDisplay
from companion.display.server import DisplayError, DisplayServer
from companion.display.view import HeardLine, table_view
from companion.rules import Bid, BidAction, Game, get_preset
from companion.sources import Utterance

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ["Ana", "Ben", "Cleo"]


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def wait_for(predicate, timeout=10.0, what="the condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


# --- the state --------------------------------------------------------------------------------

def test_the_view_follows_the_game():
    game = Game(PLAYERS, get_preset("asmodee"))
    assert table_view(game)["bid"] is None and table_view(game)["turn"] == "Ana"
    game.bid("Ana", Bid(2, 5))
    game.bid("Ben", Bid(3, 1))
    view = table_view(game, HeardLine("three pacos", 0.82, "mic"), "Ben: three pacos.")
    assert view["bid"] == {"count": 3, "face": 1, "by": "Ben", "words": "three pacos"}
    assert view["turn"] == "Cleo" and [p["turn"] for p in view["players"]] == [False, False, True]
    assert view["heard"] == {"text": "three pacos", "confidence": 0.82, "typed": False, "changed": False}
    assert view["palifico_round"] is None and view["stopped"] is False
    game.dudo("Cleo")
    view = table_view(game)
    assert view["phase"] == "reveal" and view["turn"] is None
    assert view["challenge"] == {"kind": "dudo", "by": "Cleo", "on": "Ben", "count": "pacos"}  # what to count
    game.reveal(2)  # the pacos bid was wrong: Ben loses a die
    view = table_view(game, stopped=True)
    assert [p["dice"] for p in view["players"]] == [5, 4, 5] and view["dice_in_play"] == 14
    assert view["bid"] is None and view["round"] == 2 and view["stopped"] is True
    json.dumps(view)  # the page gets it as JSON


def test_a_palifico_round_shows_what_it_changes_for_the_whole_round():
    game = Game(["Ana", "Ben", "Cleo"], get_preset("asmodee"))
    game.dice["Ben"] = 2
    game.bid("Ana", Bid(3, 5))
    game.dudo("Ben")
    game.reveal(3)  # the bid was right: Ben, on one die, is palifico
    game.bid("Ben", Bid(1, 4))
    view = table_view(game)
    assert view["palifico"] == "Ben" and view["palifico_round"] == {
        "aces_wild": False, "face_changers": list(game.face_changers()), "everyone": 3}
    game.dudo("Cleo")
    assert table_view(game)["challenge"]["count"] == "fours only, pacos are not wild"


def test_the_view_hides_dice_where_the_rules_do():
    from companion.display.view import RevealShown

    game = Game(PLAYERS, get_preset("pressman"))
    view = table_view(game)
    assert view["dice_in_play"] is None and {p["dice"] for p in view["players"]} == {None}
    game.bid("Ana", Bid(2, 4))
    game.dudo("Ben")
    seen = RevealShown("1", 15, "I read all fifteen dice")
    assert table_view(game, reveal=seen)["reveal"]["dice_seen"] == 15  # the cups are up: all see them
    game.reveal(3)  # the camera's count settles it at once: the table checks it before bidding on
    assert table_view(game, reveal=seen)["reveal"]["dice_seen"] == 15
    game.bid(game.turn, Bid(1, 3))
    # the next round under way: the camera's count, less the die lost, would be the hidden total
    assert table_view(game, reveal=seen)["reveal"] is None
    shown = Game(PLAYERS)
    assert table_view(shown, reveal=seen)["reveal"]["dice_seen"] == 15  # where the total is told, it stays


# --- the server -------------------------------------------------------------------------------

def test_the_server_serves_the_page_the_state_and_a_stream():
    server = DisplayServer("127.0.0.1", 0)
    url = server.start()
    try:
        assert server.port != 0 and url == f"http://127.0.0.1:{server.port}/"
        assert "<title>" in fetch(url) and "EventSource" in fetch(url)
        server.publish({"round": 1})
        wait_for(lambda: json.loads(fetch(url + "state")) == {"round": 1}, what="the state")
        with urllib.request.urlopen(url + "events", timeout=5) as stream:
            assert stream.headers["Content-Type"].startswith("text/event-stream")
            assert stream.readline() == b'data: {"round": 1}\n'
            stream.readline()
            server.publish({"round": 2})
            assert stream.readline() == b'data: {"round": 2}\n'
        with pytest.raises(urllib.error.HTTPError):
            fetch(url + "camera.png")  # no picture yet
        server.show_image(b"\x89PNG...")
        server.publish({"round": 2, "reveal": {"image": "/camera.png?v=1"}})
        assert urllib.request.urlopen(url + "camera.png", timeout=5).read() == b"\x89PNG..."
        # gone from the page (where the rules hide the dice, at the next round's first bid):
        # gone from here too, with the total the picture shows
        server.publish({"round": 2, "reveal": None})
        with pytest.raises(urllib.error.HTTPError):
            fetch(url + "camera.png")
    finally:
        server.close()


def ask_as(port: int, host: str, path: str = "/state") -> tuple[int, str | None, bytes]:
    """GET `path` with the Host header a browser sends for `host`."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.getheader("Server"), response.read()
    finally:
        connection.close()


@contextlib.contextmanager
def serving():
    """A display server on a free port of this machine, closed after the block."""
    server = DisplayServer("127.0.0.1", 0)
    server.start()
    try:
        yield server
    finally:
        server.close()


def test_a_page_asked_for_under_another_sites_name_is_refused():
    # DNS rebinding: a web page elsewhere points its own name at this address and reads the
    # game through a player's browser; the browser sends that name as the Host
    with serving() as server:
        server.publish({"round": 3})
        this_machine = socket.gethostname().split(".")[0]
        for host in ("evil.example", f"evil.example:{server.port}", "rebind.127.0.0.1.nip.io",
                     f"{this_machine}.evil.example", f"{this_machine}.local.evil.example:{server.port}"):
            status, _, body = ask_as(server.port, host)
            assert status == 421 and b"round" not in body and f"127.0.0.1:{server.port}".encode() in body
            assert ask_as(server.port, host, "/events")[0] == 421
        for host in (f"127.0.0.1:{server.port}", "localhost", f"[::1]:{server.port}", this_machine,
                     f"{this_machine}.local:{server.port}", f"{this_machine.upper()}.LOCAL."):
            status, _, body = ask_as(server.port, host)
            assert (status, json.loads(body)) == (200, {"round": 3}), host


def test_a_machine_named_in_full_answers_to_its_short_name_too(monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "Pi.Example.Internal")
    with serving() as server:
        for host in ("pi", "pi.local", "pi.example.internal", f"PI:{server.port}"):
            assert ask_as(server.port, host)[0] == 200, host
        for host in ("pi.evil.example", "pi.example.internal.evil.example"):
            assert ask_as(server.port, host)[0] == 421, host


def test_names_a_home_network_gives_this_machine_are_answered(monkeypatch, tmp_path):
    # a router's name for it (raspberrypi.lan, .home), Avahi's when another machine took
    # raspberrypi.local (raspberrypi-2.local), and under the search domain the local DNS gives
    # (a FRITZ!Box's raspberrypi.fritz.box): no outside site can own any of these
    from companion.display import server as display_server

    monkeypatch.setattr(socket, "gethostname", lambda: "raspberrypi")
    resolv = tmp_path / "resolv.conf"
    resolv.write_text("nameserver 192.168.178.1\nsearch fritz.box.\n")
    monkeypatch.setattr(display_server, "RESOLV_CONF", str(resolv))
    with serving() as server:
        for host in ("raspberrypi.lan", "raspberrypi.home", "raspberrypi-2.local", "raspberrypi.home.arpa",
                     f"RaspberryPi.Fritz.Box:{server.port}", "raspberrypi.internal"):
            assert ask_as(server.port, host)[0] == 200, host
        for host in ("raspberrypi.box", "fritz.box", "other.fritz.box", "raspberrypi.fritz.box.evil.example",
                     "raspberrypi.lan.evil.example", "evil.examplelan"):
            assert ask_as(server.port, host)[0] == 421, host
        # only the last search line counts, as for the resolver, and no top-level domain
        resolv.write_text("domain old.example\nsearch com fritz.box\nsearch\n")
        assert ask_as(server.port, "raspberrypi.old.example")[0] == 421
        assert ask_as(server.port, "raspberrypi.com")[0] == 421
        assert ask_as(server.port, "raspberrypi.fritz.box")[0] == 200
        resolv.write_text("domain fritz.box evil.example\n")  # a domain line names one
        assert ask_as(server.port, "raspberrypi.evil.example")[0] == 421
        resolv.unlink()  # no resolv.conf: no search domain, the rest as before
        assert ask_as(server.port, "raspberrypi.fritz.box")[0] == 421
        assert ask_as(server.port, "raspberrypi.lan")[0] == 200


def test_the_server_does_not_name_the_software_it_runs_on():
    with serving() as server:
        for path in ("/", "/state", "/camera.png", "/nothing-here"):
            _, software, _ = ask_as(server.port, "localhost", path)
            assert software == "companion", path
        # aiohttp's own answer to a request it cannot parse too
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
            raw.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            answer = raw.recv(4096)
        assert answer.startswith(b"HTTP/1.") and b"400" in answer.split(b"\r\n")[0]
        assert b"\r\nServer: companion\r\n" in answer and b"aiohttp" not in answer


def test_a_crowd_of_streams_is_turned_away_past_a_few_dozen(monkeypatch):
    import companion.display.server as display_server

    monkeypatch.setattr(display_server, "MAX_STREAMS", 3)
    server = DisplayServer("127.0.0.1", 0)
    url = server.start()
    try:
        server.publish({"round": 1})
        streams = [urllib.request.urlopen(url + "events", timeout=5) for _ in range(3)]
        for stream in streams:
            assert stream.readline() == b'data: {"round": 1}\n'
        with pytest.raises(urllib.error.HTTPError, match="503"):
            urllib.request.urlopen(url + "events", timeout=5)
        streams.pop().close()  # one leaves: a place for another
        wait_for(lambda: len(server._clients) == 2, what="the stream to end")
        with urllib.request.urlopen(url + "events", timeout=5) as again:
            assert again.readline() == b'data: {"round": 1}\n'
        for stream in streams:
            stream.close()
    finally:
        server.close()


def test_a_crowd_of_idle_connections_is_held_to_a_few_and_viewers_come_back_after(monkeypatch):
    # connections that never ask for anything, held open within the idle limit, must not take
    # every file the game needs (its journal, its voice): past the cap they are closed at once
    import companion.display.server as display_server

    monkeypatch.setattr(display_server, "MAX_CONNECTIONS", 4)
    with serving() as server, contextlib.ExitStack() as crowd_held:
        crowd = [crowd_held.enter_context(socket.create_connection(("127.0.0.1", server.port))) for _ in range(10)]
        wait_for(lambda: len(server._runner.server.connections) <= 4, what="the crowd to be cut")
        for s in crowd:
            s.settimeout(0.3)  # those let in stay open: each waits this long
        closed = 0
        for s in crowd:
            try:
                closed += s.recv(1) == b""
            except (socket.timeout, ConnectionResetError):
                pass
        assert closed >= 6
        crowd_held.close()  # the crowd goes
        wait_for(lambda: len(server._runner.server.connections) == 0, what="the crowd to be gone")
        assert fetch(server.url + "state") == "{}"  # a viewer let in again


def test_viewers_that_hang_up_at_once_leave_no_traceback(caplog):
    # A phone that drops its connection before the stream starts: the referee's terminal,
    # where the announcements are printed, must not fill with aiohttp's tracebacks.
    import struct

    server = DisplayServer("127.0.0.1", 0)
    server.start()
    try:
        server.publish({"round": 1})
        with caplog.at_level("ERROR"):
            for _ in range(40):
                with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
                    s.sendall(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset
            time.sleep(0.5)
            assert json.loads(fetch(f"http://127.0.0.1:{server.port}/state")) == {"round": 1}
        assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    finally:
        server.close()


def test_a_port_in_use_is_one_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(DisplayError, match=f"port {port} is in use"):
            DisplayServer("127.0.0.1", port).start()


def test_a_host_name_whose_lookup_never_answers_is_one_clear_error(monkeypatch):
    import companion.display.server as server

    def hanging(*args, **kwargs):
        time.sleep(3)
        raise socket.gaierror(-3, "Temporary failure in name resolution")

    monkeypatch.setattr(server, "START_TIMEOUT_S", 0.5)
    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    with pytest.raises(DisplayError, match="slow.example:8765 did not start listening within 0.5 s"):
        DisplayServer("slow.example", 8765).start()


def test_a_display_given_up_on_does_not_start_listening_later(monkeypatch):
    import companion.display.server as server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    real_lookup = socket.getaddrinfo

    def slow(host, *args, **kwargs):
        time.sleep(1.0)  # answers, but after the game has gone on without the display
        return real_lookup("127.0.0.1", *args, **kwargs)

    monkeypatch.setattr(server, "START_TIMEOUT_S", 0.3)
    monkeypatch.setattr(socket, "getaddrinfo", slow)
    display = DisplayServer("slow.example", port)
    with pytest.raises(DisplayError, match="did not start listening"):
        display.start()
    display._thread.join(timeout=10)
    assert not display._thread.is_alive()
    with socket.socket() as client:
        assert client.connect_ex(("127.0.0.1", port)) != 0  # nobody listens there


def test_a_display_on_every_address_is_shown_at_this_machines_address():
    for host in ("0.0.0.0", "::"):
        url = DisplayServer(host, 8765).url
        assert url.startswith("http://") and url.endswith(":8765/")
        assert "0.0.0.0" not in url and "[::]" not in url


def test_a_display_that_fails_never_stops_the_game():
    class BrokenServer:
        def publish(self, state):
            raise RuntimeError("the loop is gone")

    warnings = []
    game = Game(PLAYERS)
    display = TableDisplay(game, BrokenServer(), warnings.append)
    source = display.watch_source(_Lines(["two fives"]))
    assert source.next_utterance() == Utterance("two fives")
    display.refresh()
    assert len(warnings) == 1 and "the game goes on" in warnings[0]


class _Lines:
    def __init__(self, lines):
        self.lines = list(lines)

    def next_utterance(self):
        return Utterance(self.lines.pop(0)) if self.lines else None


def play(*options, script=""):
    return subprocess.run([sys.executable, "-m", "companion", "play", "--players", *PLAYERS,
                           "--input", "text", "--mute", *options],
                          input=script, capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_play_goes_on_when_the_display_cannot_start(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        journal = tmp_path / "game.jsonl"
        result = play("--journal", str(journal), "--display-port", str(port), script="two fives\n")
    assert result.returncode == 0
    assert f"the display could not start: port {port} is in use" in result.stderr
    assert "Traceback" not in result.stderr
    assert '"type":"bid"' in journal.read_text()


@pytest.mark.parametrize("host, local", [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True),
                                         ("localhost", True), ("0.0.0.0", False), ("192.168.1.20", False),
                                         ("table.local", False)])
def test_only_addresses_of_this_machine_count_as_local(host, local):
    from companion.display import is_local

    assert is_local(host) is local


def test_play_warns_when_the_display_is_seen_beyond_this_machine(tmp_path):
    result = play("--journal", str(tmp_path / "g.jsonl"), "--display-host", "0.0.0.0",
                  "--display-port", "0", script="")
    assert "anyone on the network can open it" in result.stderr
    assert "http://0.0.0.0" not in result.stderr  # an address a tablet can open
    assert play("--display-port", "70000").stderr.strip() == (
        "companion: --display-port must be a port number (0-65535), not 70000")


# --- the page in a real browser ---------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


class TypedGame:
    """`companion play --input text --display` fed one line at a time."""

    def __init__(self, journal: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "companion", "play", "--players", *PLAYERS, "--input", "text",
             "--mute", "--journal", str(journal), "--display-port", "0", *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        line = ""
        while "the table display is at" not in line:
            line = self.process.stderr.readline()
            assert line, "play ended before the display started"
        self.url = re.search(r"(http://\S+)", line).group(1)

    def say(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def test_the_page_follows_a_typed_game_in_a_browser(browser, tmp_path):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    game = TypedGame(tmp_path / "game.jsonl")
    try:
        browser.get(game.url)

        def shows(count, face, turn):
            def check(driver):
                face_box = driver.find_element(By.ID, "bid-face")
                return (driver.find_element(By.ID, "bid-count").text == count
                        and face_box.get_attribute("data-face") == face
                        and driver.find_element(By.ID, "turn").text == turn)
            WebDriverWait(browser, 10).until(check, f"the page to show {count} x {face}, {turn}")

        def dice_shown():
            return {li.get_attribute("data-name"): li.find_element(By.CLASS_NAME, "dice").text
                    for li in browser.find_elements(By.CSS_SELECTOR, "#players .player")}

        shows("", "", "Ana, your call")
        assert dice_shown() == {"Ana": "5 dice", "Ben": "5 dice", "Cleo": "5 dice"}
        game.say("two fives")
        shows("2", "5", "Ben, your call")
        game.say("three pacos")
        shows("3", "1", "Cleo, your call")
        assert browser.find_elements(By.CSS_SELECTOR, "#bid-face [aria-label=toucan]")  # a paco is the toucan
        game.say("take it back")
        shows("2", "5", "Ben, your call")  # undo is followed
        assert "two fives" in browser.find_element(By.ID, "bid-words").text
        game.say("four fives")
        game.say("dudo")
        WebDriverWait(browser, 10).until(
            lambda d: "Dudo from Cleo on Ben" in d.find_element(By.ID, "challenge").text)
        game.say("Ana 5 5 3 4 2")  # the dice said, shown in her row for all to check
        # the rows are drawn anew on each update: a row read as it is replaced is read again
        settled = WebDriverWait(browser, 10, ignored_exceptions=[StaleElementReferenceException])
        settled.until(lambda d: dice_shown()["Ana"] == "5 5 3 4 2", "Ana's dice")
        game.say("two")  # four fives was a bluff: Ben loses a die
        shows("", "", "Ben, your call")
        settled.until(lambda d: dice_shown()["Ben"] == "4 dice")
        assert dice_shown() == {"Ana": "5 dice", "Ben": "4 dice", "Cleo": "5 dice"}
        assert "two" in browser.find_element(By.ID, "heard").text
        assert "Ben" in browser.find_element(By.ID, "said").text
        browser.save_screenshot(str(tmp_path / "display.png"))
        assert (tmp_path / "display.png").stat().st_size > 10_000
    finally:
        game.close()


def test_a_reveal_fits_a_720_line_tv_without_scrolling(browser, tmp_path):
    """At a camera reveal the picture sits beside what was heard, the players above it, all
    inside a 1280x720 screen: a TV across the room cannot be scrolled."""
    import cv2
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from companion.vision.scenes import generate_scene

    photo = tmp_path / "reveal.png"
    cv2.imwrite(str(photo), generate_scene(5, size=(720, 1280), n_dice=7, angle=0.3, hard=0.3).image)
    players = ["Ana", "Ben", "Cleo", "Dora", "Eve", "Finn"]
    game = TypedGame(tmp_path / "game.jsonl", "--players", *players, "--camera-images", str(photo))  # the last --players counts
    try:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False})
        browser.get(game.url)
        for line in ("two fives", "three fives", "dudo"):
            game.say(line)
        WebDriverWait(browser, 20).until(
            lambda d: d.find_element(By.ID, "reveal-image").get_attribute("naturalWidth") not in (None, "0"),
            "the reveal's picture to load")
        assert browser.execute_script("return document.documentElement.scrollHeight") <= 720
        for element in ("reveal-image", "players", "talk", "bid-box"):
            box = browser.execute_script(
                "const r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom, r.height];",
                browser.find_element(By.ID, element))
            assert 0 <= box[0] and box[1] <= 720 and box[2] > 50, (element, box)
        assert len(browser.find_elements(By.CSS_SELECTOR, "#players .player")) == 6
        assert browser.find_element(By.ID, "reveal-note").text.startswith("The camera")  # this reveal's
        assert "revealing" in browser.find_element(By.TAG_NAME, "main").get_attribute("class")
        game.say("3")  # counted: the picture stays in sight until the next round's first bid
        WebDriverWait(browser, 10).until(
            lambda d: d.find_element(By.ID, "reveal-note").text.startswith("Last reveal"), "the next round")
        assert "revealing" in browser.find_element(By.TAG_NAME, "main").get_attribute("class")
        assert browser.execute_script("return document.documentElement.scrollHeight") <= 720
        game.say("two sixes")  # then the bid is shown big again, the picture below
        WebDriverWait(browser, 10).until(
            lambda d: "revealing" not in d.find_element(By.TAG_NAME, "main").get_attribute("class"),
            "the layout of a round")
    finally:
        game.close()


def test_a_camera_reveal_puts_its_picture_on_the_page(tmp_path):
    from companion.vision.types import DiceReading, Die, RevealOutcome

    class Shown:
        def __init__(self):
            self.states, self.image = [], None

        def publish(self, state):
            self.states.append(state)

        def show_image(self, png):
            self.image = png

    class Camera:
        saves = True  # the second reveal's picture cannot be saved (a full card)

        def reveal(self, expected_total, save_dir=None, round_number=None, say_total=True, latest_round=None):
            picture = None
            if self.saves:
                picture = tmp_path / "reveal-0001.png"
                picture.write_bytes(b"\x89PNG picture")
            dice = tuple(Die(5, (10 * i, 0, 8, 8), 0.99) for i in range(expected_total))
            return RevealOutcome(DiceReading(dice), "", picture)

    server, camera = Shown(), Camera()
    display = TableDisplay(Game(PLAYERS), server)
    outcome = display.watch_counter(camera).reveal(15)
    assert outcome.reading is not None  # the referee gets the camera's outcome as it was
    assert server.image == b"\x89PNG picture"
    first = server.states[-1]["reveal"]
    assert first["image"].startswith("/camera.png?v=") and (first["dice_seen"], first["note"]) == (15, "")
    # a page left open across a resume: the next run's first picture has another address
    again = TableDisplay(Game(PLAYERS), server)
    again.watch_counter(camera).reveal(15)
    assert server.states[-1]["reveal"]["image"] != first["image"]
    camera.saves = False
    display.watch_counter(camera).reveal(14)
    # the page says what this reveal saw, under no picture rather than the last reveal's
    assert server.states[-1]["reveal"] == {"image": None, "dice_seen": 14, "note": ""}

    # a bid taken back leaves the last reveal shown; the count or the challenge taken back does not
    from companion.rules import BidAction, ChallengeAction, CountAction, undone_event

    class Kept:
        def append(self, events):
            pass

    journal = display.watch_journal(Kept())
    journal.append([undone_event(BidAction("Ana", Bid(2, 2)))])
    assert server.states[-1]["reveal"] is not None
    for action in (CountAction(3), ChallengeAction("dudo", "Ben")):
        display.watch_counter(camera).reveal(14)
        journal.append([undone_event(action)])
        assert server.states[-1]["reveal"] is None


def test_a_resumed_game_is_shown_as_it_stands(tmp_path):
    journal = tmp_path / "game.jsonl"
    assert play("--journal", str(journal), script="two fives\nthree fives\n").returncode == 0
    resumed = subprocess.Popen([sys.executable, "-m", "companion", "play", "--resume", "--journal", str(journal),
                                "--input", "text", "--mute", "--display-port", "0"],
                               stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               text=True, cwd=ROOT)
    try:
        line = ""
        while "the table display is at" not in line:
            line = resumed.stderr.readline()
            assert line, "play ended before the display started"
        url = re.search(r"(http://\S+)", line).group(1)
        state = json.loads(fetch(url + "state"))
        assert state["bid"]["words"] == "three fives" and state["turn"] == "Cleo"
    finally:
        resumed.stdin.close()
        resumed.wait(timeout=30)


def test_a_mistaken_option_is_one_line():
    result = play("--display-port", "abc")
    assert result.stderr.strip().splitlines() == [
        "companion: argument --display-port: invalid int value: 'abc' (see: companion play --help)"]
    assert result.returncode == 2


STALLED_VIEWER = """
import socket, time
from companion.display.server import DisplayServer
server = DisplayServer("127.0.0.1", 0)
server.start()
viewer = socket.socket()
viewer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
viewer.connect(("127.0.0.1", server.port))
viewer.sendall(b"GET /events HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n")  # and never reads (a name it answers to)
time.sleep(0.5)
for i in range(5):
    server.publish({"x": "y" * 5_000_000, "i": i})
time.sleep(0.5)
server.close()
print("closed")
"""


def test_a_viewer_that_stopped_reading_does_not_spoil_the_end_of_the_game():
    # a tablet gone to sleep with the page open: its stream is cut, quietly
    ended = subprocess.run([sys.executable, "-c", STALLED_VIEWER], capture_output=True, text=True, timeout=120)
    assert ended.stdout.strip() == "closed", ended.stderr
    assert "Traceback" not in ended.stderr and "destroyed" not in ended.stderr, ended.stderr


def test_while_the_players_say_their_names_the_page_shows_nobodys_call():
    class Shown:
        states: list = []

        def publish(self, state):
            self.states.append(state)

    class Learning:  # a source whose engine learns each player's name before the game
        def expect(self, what, hand_sizes=frozenset()):
            pass

        def learn_name(self, player, phrase):
            return True

        def next_utterance(self):
            return Utterance("ana calza", confidence=0.9)

    server = Shown()
    display = TableDisplay(Game(PLAYERS), server)
    source = display.watch_source(Learning())
    source.expect("calls")
    assert source.learn_name("Ana", "calza")
    display.watch_speaker(type("Quiet", (), {"say": lambda self, text: None})()).say("Ana, say: Ana calza.")
    source.next_utterance()
    assert server.states[-1]["learning_names"] and server.states[-1]["turn"] is None
    assert not any(p["turn"] for p in server.states[-1]["players"])
    source.expect("calls")  # the game's first call
    source.next_utterance()
    assert not server.states[-1]["learning_names"] and server.states[-1]["turn"] == "Ana"


def test_a_won_games_page_says_game_over_when_the_companion_stops(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    game = TypedGame(tmp_path / "game.jsonl", "--dice", "1")
    try:
        browser.get(game.url)
        for line in ("one four", "dudo", "0", "one four", "dudo", "0"):  # Ana out, then Ben: Cleo wins
            game.say(line)
        WebDriverWait(browser, 10).until(lambda d: "Cleo wins" in d.find_element(By.ID, "winner").text)
    finally:
        game.close()
    # a TV left showing the winner: not a red "reconnecting" under it
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "connection").text == "game over")
    assert not browser.find_element(By.ID, "banner").is_displayed()  # nor a "paused" banner
    assert not browser.find_element(By.ID, "bid").is_displayed()  # the last bid is no result


def test_a_paused_game_says_so_and_a_lost_referee_too(browser, tmp_path):
    # A TV left on after the companion stops must not show "Ben, your call" as if it were live.
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    game = TypedGame(tmp_path / "game.jsonl")
    try:
        browser.get(game.url)
        game.say("two fives")
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "turn").text == "Ben, your call")
        assert not browser.find_element(By.ID, "banner").is_displayed()
    finally:
        game.close()  # the input ends: the game pauses
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "banner").is_displayed(), "the banner")
    assert "the game is paused" in browser.find_element(By.ID, "banner").text
    assert "stopped" in browser.find_element(By.TAG_NAME, "main").get_attribute("class")
    # A page whose referee vanished without a word (killed) says it may be out of date.
    game = TypedGame(tmp_path / "other.jsonl")
    try:
        browser.get(game.url)
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "connection").text == "live")
        game.process.kill()
        WebDriverWait(browser, 15).until(lambda d: d.find_element(By.ID, "banner").is_displayed(), "the banner")
        assert "cannot be reached" in browser.find_element(By.ID, "banner").text
    finally:
        game.process.wait(timeout=30)


def test_a_page_turned_away_by_a_crowd_comes_back_when_there_is_room(browser, monkeypatch):
    import companion.display.server as display_server
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    monkeypatch.setattr(display_server, "MAX_STREAMS", 1)
    server = DisplayServer("127.0.0.1", 0)
    url = server.start()
    try:
        game = Game(PLAYERS)
        server.publish(table_view(game))
        crowd = urllib.request.urlopen(url + "events", timeout=5)  # the one place, taken
        crowd.readline()
        browser.get(url)  # the TV is turned away
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "connection").text == "reconnecting")
        crowd.close()
        wait_for(lambda: not server._clients, what="the crowd to go")
        game.apply(BidAction("Ana", Bid(2, 5)))
        server.publish(table_view(game))
        WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "turn").text == "Ben, your call",
                                         "the page to follow the game again")
    finally:
        server.close()


def test_eight_players_with_long_names_fit_a_720_line_tv(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    players = ["Françoise", "Marie-Antoinette", "Jean-Christophe", "Anne-Charlotte", "Guðrún", "Maximiliana",
               "Bartholomew", "Wolfeschlegelsteinhausen"]
    game = TypedGame(tmp_path / "game.jsonl", "--players", *players, "--dice", "2")
    try:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False})
        browser.get(game.url)
        for line in ("three fives", "dudo", "nine"):  # Marie-Antoinette, on one die, is palifico
            game.say(line)
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#players .badge"))
        assert browser.execute_script("return [document.documentElement.scrollWidth, "
                                      "document.documentElement.scrollHeight]") == [1280, 720]
        rows = browser.find_elements(By.CSS_SELECTOR, "#players .player")
        assert len(rows) == 8
        for row in rows:  # one line each, the dice and the badge in full
            assert row.size["height"] < 80, row.get_attribute("data-name")
            box = browser.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.right, r.bottom];",
                                         row.find_element(By.CLASS_NAME, "dice"))
            assert box[0] <= 1280 and box[1] <= 720
        badge = browser.find_element(By.CSS_SELECTOR, "#players .badge")
        assert badge.is_displayed() and badge.size["width"] > 20
        assert "Palifico" in browser.find_element(By.ID, "palifico-rule").text
    finally:
        game.close()


def test_a_palifico_reveal_keeps_the_referees_words_on_a_720_line_tv(browser, tmp_path):
    # The bid box holds the most there (the challenge, what to count, the bid): the words to
    # say next must still be on the screen, which cannot be scrolled from across the room.
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    game = TypedGame(tmp_path / "game.jsonl", "--rules", "pressman", "--dice", "2")
    try:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False})
        browser.get(game.url)
        for line in ("three fives", "dudo", "six", "one four", "two fours", "dudo", "zero", "one three",
                     "two threes", "dudo"):
            game.say(line)
        WebDriverWait(browser, 10).until(lambda d: "threes only" in d.find_element(By.ID, "count-what").text)
        assert browser.execute_script("return document.documentElement.scrollHeight") <= 720
        said = browser.find_element(By.ID, "said")
        assert "Say the count" in said.text
        bottom = browser.execute_script("return arguments[0].getBoundingClientRect().bottom", said)
        assert bottom <= 720
        assert not browser.find_element(By.ID, "palifico-rule").is_displayed()  # what to count says it now
    finally:
        game.close()


def test_a_new_game_of_the_evening_is_shown_from_its_start():
    class Shown:
        def __init__(self):
            self.states = []

        def publish(self, state):
            self.states.append(state)

    from companion.rules import BidAction, ChallengeAction, CountAction

    won = Game(["Ana", "Ben"], get_preset("asmodee").replace(starting_dice=1, max_dice=1))
    for action in (BidAction("Ana", Bid(1, 3)), ChallengeAction("dudo", "Ben"), CountAction(0)):
        won.apply(action)
    server = Shown()
    display = TableDisplay(won, server)
    display.watch_speaker(type("Quiet", (), {"say": lambda self, text: None})()).say("Ben wins the game!")
    assert server.states[-1]["winner"] == "Ben" and server.states[-1]["said"] == "Ben wins the game!"
    display.new_game(Game(["Ana", "Ben"], won.rules))
    shown = server.states[-1]
    assert shown["winner"] is None and shown["turn"] == "Ana" and shown["round"] == 1
    assert shown["said"] is None and shown["heard"] is None and shown["reveal"] is None  # nothing of the last game
    assert [p["dice"] for p in shown["players"]] == [1, 1]


def test_the_dice_said_at_a_reveal_are_shown_until_they_count():
    from companion.rules import BidAction, ChallengeAction
    from companion.rules.events import DiceCounted, HandShown, HandTakenBack, Undone

    class Shown:
        def publish(self, state):
            self.hands = {p["name"]: p["hand"] for p in state["players"]}

    game = Game(PLAYERS)
    for action in (BidAction("Ana", Bid(3, 4)), ChallengeAction("dudo", "Ben")):
        game.apply(action)
    server = Shown()
    display = TableDisplay(game, server)
    journal = display.watch_journal(type("Kept", (), {"append": lambda self, events: None})())
    journal.append([HandShown("Ana", (4, 4, 1, 2, 3))])
    journal.append([HandShown("Ben", (6, 6, 6, 6, 6))])
    assert server.hands == {"Ana": [4, 4, 1, 2, 3], "Ben": [6, 6, 6, 6, 6], "Cleo": None}
    journal.append([HandTakenBack("Ben")])
    assert server.hands["Ben"] is None and server.hands["Ana"] == [4, 4, 1, 2, 3]
    journal.append([DiceCounted(3)])  # (the page shows the count's round from here)
    assert display.hands == {}
    journal.append([Undone({"kind": "count"}, hands={"Ana": (4, 4, 1, 2, 3)})])  # taken back: hers stand
    assert display.hands == {"Ana": (4, 4, 1, 2, 3)}


def test_talk_given_no_reply_never_shows_the_last_line_as_its_answer():
    class Shown:
        def __init__(self):
            self.states = []

        def publish(self, state):
            self.state = state
            self.states.append(state)

    class Source:
        def __init__(self, heard):
            self.heard = list(heard)

        def next_utterance(self):
            return self.heard.pop(0)

    server = Shown()
    display = TableDisplay(Game(PLAYERS), server)
    source = display.watch_source(Source([Utterance("four fives", confidence=0.15, origin="mic"),
                                          Utterance("three fours", confidence=0.9, origin="mic")]))
    speaker = display.watch_speaker(type("Quiet", (), {"say": lambda self, text: None})())
    speaker.say("Ben: four fours. Cleo, your call.")
    source.next_utterance()  # chatter: the referee passes over it in silence
    assert server.state["said_earlier"] is False  # not before the referee is done with it
    source.next_utterance()  # ... and it is listening again
    passed_over = server.states[-2]  # shown while it listened for the next
    assert passed_over["said_earlier"] is True and passed_over["heard"]["text"] == "four fives"
    assert server.state["said_earlier"] is False and server.state["heard"]["text"] == "three fours"  # reply to come


def test_a_name_nobody_said_leaves_the_heard_line_alone():
    class Shown:
        def publish(self, state):
            self.state = state

    server = Shown()
    display = TableDisplay(Game(PLAYERS), server)
    display.heard_utterance(Utterance("ana calza", confidence=0.9, origin="mic"))
    display.heard_utterance(Utterance("", confidence=0.0, origin="mic", voiced=False))  # the wait ran out
    assert server.state["heard"]["text"] == "ana calza"
    display.heard_utterance(Utterance("", confidence=0.1, origin="mic"))  # words too faint to make out: shown
    assert server.state["heard"]["text"] == ""
