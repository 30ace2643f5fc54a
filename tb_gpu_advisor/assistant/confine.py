"""The logdirs an assistant server was started with, and the checks that keep every path it reads inside them."""

import os
from dataclasses import dataclass

from tb_gpu_advisor.remote import is_remote_url


class AdvisorError(ValueError):
    """A request the assistant server refuses or cannot answer; `str()` is the one line the client sees."""


OUTSIDE = "is outside the logdirs this server was started with ({roots}): refused, nothing there was read"
LINK_OUTSIDE = "is a symbolic link to a place outside the logdirs this server was started with: refused, not read"


@dataclass(frozen=True)
class Root:
    """One configured logdir: as given, and its real path (local) or normalized URL (remote)."""

    given: str
    real: str
    remote: bool

    def holds(self, real_path):
        """Whether `real_path` (a real local path, or a URL) lies in this logdir."""
        if self.remote != is_remote_url(real_path):
            return False
        if self.remote:
            return real_path == self.real or real_path.startswith(self.real + "/")
        return real_path == self.real or real_path.startswith(self.real.rstrip(os.sep) + os.sep)


def _real(path):
    if is_remote_url(path):
        scheme, rest = path.split("://", 1)
        parts = [part for part in rest.split("/") if part not in ("", ".")]
        if ".." in parts:
            raise AdvisorError(f"{path}: '..' is not allowed in a URL")
        return f"{scheme}://{'/'.join(parts)}"
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


class Logdirs:
    """The configured logdirs. `locate(path)` says which one holds a path the client names; host files of a run
    are checked again by their real path (`check_host`), so a symbolic link out of a logdir is never opened."""

    def __init__(self, logdirs):
        roots = []
        for given in logdirs:
            given = str(given)
            if not is_remote_url(given) and not os.path.isdir(given):
                raise AdvisorError(f"{given}: no such directory (an assistant server serves logdirs)")
            roots.append(Root(given=given, real=_real(given), remote=is_remote_url(given)))
        if not roots:
            raise AdvisorError("name at least one logdir to serve")
        self.roots = tuple(roots)

    def names(self):
        return [root.given for root in self.roots]

    def locate(self, path=None):
        """The path to read for `path`: the first logdir when None; else the logdir it names or a directory or file
        inside one (relative paths are taken inside the first logdir). AdvisorError when it lies outside."""
        if path is None or path == "":
            return self.roots[0].given
        path = str(path)
        for root in self.roots:
            if path == root.given:
                return root.given
        candidate = path
        if not is_remote_url(path) and not os.path.isabs(os.path.expanduser(path)) and not self.roots[0].remote:
            candidate = os.path.join(self.roots[0].given, path)
        real = _real(candidate)
        if any(root.holds(real) for root in self.roots):
            return candidate
        raise AdvisorError(f"{path}: " + OUTSIDE.format(roots=", ".join(self.names())))

    def check_host(self, path):
        """None when host file `path` really lies in a logdir, else why it is refused (it is then not read)."""
        return None if any(root.holds(_real(str(path))) for root in self.roots) else LINK_OUTSIDE
