"""Opening a file a user named (a photo, a recording, a journal, house rules, a profile).

Opening a named pipe for reading waits until something opens it to write, so a FIFO no
program writes to, given as a photo or a journal, would hang the program with no word said.
Files are opened without that wait: such a FIFO reads as empty, a pipe a program writes to
(`--house-rules <(...)`, `cat photo.png | companion see /dev/stdin`) reads as before, and a
device (a terminal, /dev/zero) or a socket is refused.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

NOT_A_FILE = "a device or a socket, not a file"
_NO_WAIT = getattr(os, "O_NONBLOCK", 0)  # not on Windows, where opening a pipe does not wait


def open_file(path: str | Path) -> BinaryIO:
    """The file opened for reading in binary, or OSError: FileNotFoundError, IsADirectoryError,
    or one whose strerror is NOT_A_FILE for a device or a socket."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | _NO_WAIT)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise OSError(errno.EINVAL, NOT_A_FILE, str(path))
        if _NO_WAIT:
            os.set_blocking(fd, True)  # reads wait for a writer's data, as any file's do
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | Path) -> bytes:
    with open_file(path) as f:
        return f.read()
