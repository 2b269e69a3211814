"""The table display: a web page that shows the game at a glance, live (`play --display`).

Its address defaults live here, where the command line can read them without starting the
server's imports."""

DEFAULT_HOST = "127.0.0.1"  # this machine only
DEFAULT_PORT = 8765
LOCAL_HOSTS = (DEFAULT_HOST, "localhost", "::1")
