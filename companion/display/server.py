"""The display's web server: aiohttp in a thread of its own, serving the page, the state as
JSON, a stream of server-sent events and the camera's last picture.

The game runs on the main thread and hands over each new state with `publish`; the server
only reads what it is given, so the page can never change the game."""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import json
import logging
import socket
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from importlib import resources
from typing import Any, Callable

from companion.display import DEFAULT_HOST, DEFAULT_PORT
from companion.errors import CompanionError

KEEPALIVE_S = 15.0  # a comment line this often keeps proxies and browsers from giving up
# On a shared network (a tablet's setup) anyone may connect. A connection that asks nothing is
# let go after IDLE_S (aiohttp's default is an hour: a thousand of them took every file the
# companion may open), and at most MAX_STREAMS pages follow the game at once.
IDLE_S = 30.0
MAX_STREAMS = 32
# More connections than this at once are closed as they come (a crowd of idle ones held
# within IDLE_S could otherwise still take every file the game needs: its journal, its voice).
MAX_CONNECTIONS = 128
START_TIMEOUT_S = 10.0  # a host name whose lookup takes longer is refused
STOP_GRACE_S = 1.0  # streams still writing this long after the game ends are cut
ANY_ADDRESS = ("0.0.0.0", "::", "")  # listen on every address (a tablet's setup)
# Names under these no outside site can own, so no web page elsewhere can point one here:
# mDNS's .local (Avahi's raspberrypi-2.local too), home.arpa and .internal, set aside for
# home and private networks, and the names home routers give unregistered (.lan, .home).
PRIVATE_SUFFIXES = ("localhost", "local", "home.arpa", "internal", "lan", "home", "localdomain")
PRIVATE_ENDINGS = tuple(f".{suffix}" for suffix in PRIVATE_SUFFIXES)
RESOLV_CONF = "/etc/resolv.conf"  # its search domains: the local network's (fritz.box)


class DisplayError(CompanionError):
    """The display could not start; the game goes on without it."""


class DisplayServer:
    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 warn: Callable[[str], None] = lambda line: None) -> None:
        self.host, self.port = host, port
        self._warn = warn
        self._out_of_files_said = False
        self._state: dict[str, Any] = {}
        self._image: bytes | None = None
        self._clients: set[asyncio.Queue] = set()
        self._streams: set[asyncio.Task] = set()  # the event streams being served
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner = None
        self._thread: threading.Thread | None = None
        # A start given up on (a slow host lookup) must not come to life later unseen, serving
        # a page the game never updates: whichever of the two comes first decides, under this.
        self._starting = threading.Lock()
        self._given_up = False

    @property
    def url(self) -> str:
        """Where to open the page; for a server on every address, this machine's address on
        the network (a tablet cannot open 0.0.0.0)."""
        host = _network_address() if self.host in ANY_ADDRESS else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"

    def start(self) -> str:
        """Listen; returns the page's address. Raises DisplayError when it cannot."""
        try:
            import aiohttp  # noqa: F401
        except ImportError:
            raise DisplayError("the display needs aiohttp: pip install aiohttp") from None
        started: Future = Future()
        self._thread = threading.Thread(target=self._serve, args=(started,), name="display",
                                        daemon=True)
        self._thread.start()
        try:
            error = started.exception(timeout=START_TIMEOUT_S)
        except FutureTimeout:  # a host name whose lookup never answers
            with self._starting:
                if not started.done():
                    self._given_up = True
                    raise DisplayError(f"{self.host}:{self.port} did not start listening within "
                                       f"{START_TIMEOUT_S:g} s (is the host name right?)") from None
            error = started.exception()
        if error is not None:
            raise DisplayError(_why_not(error, self.host, self.port)) from None
        return self.url

    def publish(self, state: dict[str, Any]) -> None:
        """The page's new state (from any thread)."""
        self._state = state  # served from now on; streams get it from the server's thread
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._send, state)

    def show_image(self, png: bytes) -> None:
        """The camera's latest annotated picture, served at /camera.png."""
        self._image = png

    def close(self) -> None:
        loop = self._loop
        if loop is None:
            return
        self._loop = None
        try:
            asyncio.run_coroutine_threadsafe(self._stop(), loop).result(timeout=5)
        except Exception:  # closing must never be what stops the companion
            pass
        try:
            # stopped only now, whether or not _stop finished: stopping inside it kept its
            # result from ever arriving
            loop.call_soon_threadsafe(loop.stop)
        except RuntimeError:  # the loop has already closed
            pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    # --- on the server's thread ---------------------------------------------------------------

    def _serve(self, started: Future) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        # What a stranger's malformed requests make aiohttp and asyncio report (a traceback
        # each) is no news for the players' terminal: the page only reads, and goes on.
        loop.set_exception_handler(self._loop_problem)
        for name in ("aiohttp.server", "aiohttp.web", "aiohttp.access"):
            logging.getLogger(name).addHandler(logging.NullHandler())
            logging.getLogger(name).propagate = False
        try:
            loop.run_until_complete(self._listen())
        except BaseException as error:  # noqa: BLE001 - handed to the game's thread
            started.set_exception(error)
            loop.close()
            return
        with self._starting:
            if self._given_up:  # listening at last, after the game went on without it
                loop.run_until_complete(self._runner.cleanup())
                loop.close()
                return
            self._loop = loop
            started.set_result(None)
        try:
            loop.run_forever()
        finally:
            loop.close()

    def _loop_problem(self, loop, context) -> None:
        # Out of files (a crowd of connections) is worth one line: the page stops taking
        # viewers until they go. Anything else a stranger's requests cause is passed over.
        error = context.get("exception")
        if isinstance(error, OSError) and error.errno in (errno.EMFILE, errno.ENFILE) and not self._out_of_files_said:
            self._out_of_files_said = True
            self._warn("the display has too many connections open (out of files): new viewers wait until some go")

    async def _listen(self) -> None:
        from aiohttp import web

        @web.middleware
        async def only_our_names(request, handler):
            # (a request with no Host at all is no browser's: a rebinding page's always has one)
            if not self._is_our_name(request.headers.get("Host", "localhost")):
                raise web.HTTPMisdirectedRequest(text=f"this page is served as {self.url}\n")
            return await handler(request)

        # Not which aiohttp and Python answer, in any response, aiohttp's own error pages too
        # (they skip the application's hooks): the default it sets every response from.
        from aiohttp import web_response

        web_response.SERVER_SOFTWARE = "companion"
        app = web.Application(middlewares=[only_our_names])
        app.router.add_get("/", self._page)
        app.router.add_get("/state", self._state_json)
        app.router.add_get("/events", self._events)
        app.router.add_get("/camera.png", self._camera)
        # handler_cancellation: a viewer gone ends its stream at once, not at the next state
        # (reconnecting in a loop otherwise piled up streams by the thousand)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None, keepalive_timeout=IDLE_S,
                                     handler_cancellation=True)
        await self._runner.setup()
        server = self._runner.server
        let_in = server.connection_made

        def let_in_while_there_is_room(handler, transport) -> None:
            let_in(handler, transport)
            if len(server.connections) > MAX_CONNECTIONS:
                transport.close()

        server.connection_made = let_in_while_there_is_room
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except BaseException:
            await self._runner.cleanup()
            raise
        self.port = self._runner.addresses[0][1]  # the one chosen, when asked for port 0

    async def _stop(self) -> None:
        for queue in list(self._clients):
            _latest(queue, None)  # each stream ends
        streams = {task for task in self._streams if not task.done()}
        if streams:  # a viewer that stopped reading (a tablet asleep) is not waited for
            _, stalled = await asyncio.wait(streams, timeout=STOP_GRACE_S)
            for task in stalled:
                task.cancel()
            await asyncio.gather(*stalled, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()

    def _is_our_name(self, host_header: str) -> bool:
        """Is the Host a page asked for one this server answers to: an address, a name no outside
        site can own (localhost, raspberrypi.local, raspberrypi.lan), this machine's own name
        (raspberrypi, and under the local network's search domains) or the name it was told to
        listen on? Any other name is a web page elsewhere that made its own name point here (DNS
        rebinding) to read the game through a player's browser: even raspberrypi.evil.example,
        so only these names exactly."""
        host = host_header.strip().lower()
        if host.startswith("["):  # [::1]:8765
            host = host[1:].split("]", 1)[0]
        elif host.count(":") == 1:
            host = host.split(":", 1)[0]
        host = host.rstrip(".")
        try:
            ipaddress.ip_address(host)
            return True
        except ValueError:
            pass
        if host in ("localhost", self.host.lower().rstrip(".")) or host.endswith(PRIVATE_ENDINGS):
            return True
        full = socket.gethostname().lower().rstrip(".")  # pi, or pi.example.com
        short = full.split(".")[0]  # a name of one label no outside site can hold
        return host in (full, short) or host in {f"{short}.{domain}" for domain in _search_domains()}

    def _send(self, state: dict[str, Any]) -> None:
        for queue in self._clients:
            _latest(queue, state)

    async def _page(self, request):
        from aiohttp import web

        page = resources.files("companion.display").joinpath("page.html").read_text("utf-8")
        return web.Response(text=page, content_type="text/html")

    async def _state_json(self, request):
        from aiohttp import web

        return web.json_response(self._state)

    async def _camera(self, request):
        from aiohttp import web

        # only while the page shows it: where the rules hide the dice in play, the picture
        # (and its total) goes from the page with the next round's first bid, and from here too
        if self._image is None or not (self._state.get("reveal") or {}).get("image"):
            raise web.HTTPNotFound(text="no picture now")
        return web.Response(body=self._image, content_type="image/png",
                            headers={"Cache-Control": "no-store"})

    async def _events(self, request):
        from aiohttp import web

        if len(self._clients) >= MAX_STREAMS:
            raise web.HTTPServiceUnavailable(text="too many pages are following this game")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "Cache-Control": "no-cache"})
        queue: asyncio.Queue = asyncio.Queue(maxsize=1)  # each state is whole: only the latest counts
        self._clients.add(queue)
        self._streams.add(asyncio.current_task())
        try:
            await response.prepare(request)  # a viewer gone already fails here, not only in a write
            state = written = self._state
            while state is not None:
                await response.write(f"data: {json.dumps(state)}\n\n".encode())
                written = state
                while True:
                    try:
                        state = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                        break
                    except asyncio.TimeoutError:
                        await response.write(b": still here\n\n")
            if self._state is not written:  # the game's last state (it stopped), not yet sent
                await response.write(f"data: {json.dumps(self._state)}\n\n".encode())
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self._clients.discard(queue)
            self._streams.discard(asyncio.current_task())
        return response


def _latest(queue: asyncio.Queue, item) -> None:
    """Put `item` in a one-place queue, in place of what a slow reader has not taken yet."""
    if queue.full():
        queue.get_nowait()
    queue.put_nowait(item)


def _search_domains() -> list[str]:
    """The domains resolv.conf's search (or domain) line names, the last such line as the
    resolver takes it: where the local network's own DNS gives this machine a name (a
    FRITZ!Box's raspberrypi.fritz.box). A domain of one label is left out: a top-level one
    (`search com`) is anybody's, and the private ones are answered anyway."""
    try:
        with open(RESOLV_CONF, encoding="utf-8", errors="replace") as conf:
            lines = conf.read(65536).splitlines()
    except OSError:
        return []
    # (a line naming none is passed over, and a domain line names one, as glibc reads them)
    named = [words[1:] if words[0] == "search" else words[1:2] for words in map(str.split, lines)
             if len(words) > 1 and words[0] in ("search", "domain")]
    domains = (domain.lower().rstrip(".") for domain in (named[-1] if named else ()))
    return [domain for domain in domains if "." in domain]


def _why_not(error: BaseException, host: str, port: int) -> str:
    if isinstance(error, OSError):
        if error.errno in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
            return f"port {port} is in use (choose another with --display-port)"
        if error.errno in (99, 49, -2, -3, -5):  # no such address here, or an unknown name
            return f"cannot listen on {host!r}: {error.strerror or error}"
        return f"cannot listen on {host}:{port}: {error.strerror or error}"
    return f"cannot start the web server: {error}"


def _network_address() -> str:
    """This machine's address on its network (the interface a packet out would leave by; none is
    sent), or its host name where it has no route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never a real host
            return probe.getsockname()[0]
    except OSError:
        return socket.gethostname()
