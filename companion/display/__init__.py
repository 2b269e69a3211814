"""The table display: a web page that shows the game at a glance, live (`play --display`).

Its address defaults live here, where the command line can read them without starting the
server's imports."""

DEFAULT_HOST = "127.0.0.1"  # this machine only
DEFAULT_PORT = 8765
LOCAL_HOSTS = (DEFAULT_HOST, "localhost", "::1")


def is_local(host: str) -> bool:
    """Does a page on this host listen to this machine only (127.x.x.x, ::1, localhost)?"""
    import ipaddress

    if host in LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name other than localhost: not known to be this machine only
        return False
