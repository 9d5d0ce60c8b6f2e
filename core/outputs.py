"""Output files of the command line: checked before any work, written so that a failure leaves
nothing half-written and no earlier file clobbered."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import Iterator

from .errors import ScenarioError

# Image types matplotlib writes without extra packages (``--plot``); no suffix means PNG.
PLOT_SUFFIXES = (".png", ".pdf", ".svg", ".svgz", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".eps", ".ps")


def check_writable(path: str | None, option: str) -> str:
    """``path`` as an absolute path, after proving that a file can be created in its folder.

    Refused with a :class:`ScenarioError` naming ``option``: an empty name, a folder that does
    not exist or cannot be written (a read-only mount, ``/proc``), a path that is a folder."""
    if path is None or not str(path).strip():
        raise ScenarioError(option, "empty file name")
    full = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(full)
    if not os.path.isdir(folder):
        raise ScenarioError(option, f"folder does not exist: {folder}")
    if os.path.isdir(full):
        raise ScenarioError(option, f"is a folder: {full}")
    try:  # the only reliable test: as root, os.access says yes to read-only mounts and /proc
        fd, probe = tempfile.mkstemp(prefix=".vm-write-check-", dir=folder)
    except OSError as exc:
        raise ScenarioError(option, f"cannot create a file in {folder} ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)
    return full


def check_plot_path(path: str | None, option: str = "--plot") -> str:
    full = check_writable(path, option)
    suffix = os.path.splitext(full)[1].lower()
    if suffix and suffix not in PLOT_SUFFIXES:
        raise ScenarioError(option, f"unknown image type {suffix!r}; use one of {', '.join(PLOT_SUFFIXES)}")
    return full


@contextmanager
def staged(path: str, option: str) -> Iterator[str]:
    """A temporary file beside ``path`` (same suffix) for the caller to write; :func:`commit` moves it
    into place. On any exception the temporary file is removed and ``path`` left as it was."""
    folder, name = os.path.split(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".vm-", suffix=os.path.splitext(name)[1], dir=folder)
    except OSError as exc:
        raise ScenarioError(option, f"cannot create a file in {folder} ({exc.strerror or exc})") from None
    os.close(fd)
    try:
        yield tmp
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def default_mode() -> int:
    """The permissions an ordinary new file gets (0666 less the umask); mkstemp's are 0600."""
    return 0o666 & ~_UMASK


_UMASK = os.umask(0)  # read once at import (os.umask can only be read by setting it)
os.umask(_UMASK)


def commit(tmp: str, path: str, option: str) -> None:
    try:
        os.chmod(tmp, default_mode())
        os.replace(tmp, path)
    except OSError as exc:
        raise ScenarioError(option, f"cannot write {path}: {exc.strerror or exc}") from None


def write_text(path: str, text: str, option: str) -> None:
    """``text`` into ``path`` whole or not at all (:func:`staged` and :func:`commit`)."""
    with staged(path, option) as tmp:
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            raise ScenarioError(option, f"cannot write {path}: {exc.strerror or exc}") from None
        commit(tmp, path, option)


__all__ = ["check_writable", "check_plot_path", "staged", "commit", "write_text", "default_mode", "PLOT_SUFFIXES"]
