"""Opening a file a user named (a photo, a recording, a journal, house rules, a profile).

Opening a named pipe for reading waits until something writes to it, so a FIFO given as a
photo or a journal would hang the program with no word said. Such files are opened without
waiting, and only a regular file is read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

NOT_A_FILE = "a pipe or a device, not a file"


def open_file(path: str | Path) -> BinaryIO:
    """The file opened for reading in binary, or OSError: FileNotFoundError, IsADirectoryError,
    or one whose strerror is NOT_A_FILE for a pipe, a socket or a device."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, NOT_A_FILE, str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | Path) -> bytes:
    with open_file(path) as f:
        return f.read()
