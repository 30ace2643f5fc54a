"""Run summaries persisted outside the logdir (under the tb-gpu-advisor cache directory), keyed by the host
file's path and version and by the analysis code, so a restarted server re-analyzes nothing that has not
changed, and a new version of the code re-analyzes everything."""

import hashlib
import json
import os
import tempfile
import threading

import tb_gpu_advisor
from tb_gpu_advisor.remote.cache import default_cache_dir

_PACKAGE = os.path.dirname(os.path.abspath(tb_gpu_advisor.__file__))
_code_version = None


def code_version():
    """A digest of the package's Python sources: summaries made by other code are not reused."""
    global _code_version
    if _code_version is None:
        digest = hashlib.sha256()
        for directory, subdirs, files in os.walk(_PACKAGE):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(directory, name)
                    digest.update(os.path.relpath(path, _PACKAGE).encode())
                    with open(path, "rb") as handle:
                        digest.update(handle.read())
        _code_version = digest.hexdigest()[:16]
    return _code_version


class SummaryStore:
    """{(path, version): summary dict}, in memory and as one small JSON file each under `root`; a file that
    cannot be read or written is skipped (the summary is then computed again), never an error."""

    def __init__(self, root=None):
        self.root = root or os.path.join(default_cache_dir(), "summaries")
        self._memory = {}
        self._absent = set()  # keys found in neither place: not looked for on disk again until put
        self._lock = threading.Lock()

    def _file(self, path, version):
        key = hashlib.sha256(f"{path}\0{version}\0{code_version()}".encode()).hexdigest()[:32]
        return os.path.join(self.root, key[:2], f"{key}.json")

    def get(self, path, version):
        """The stored summary of this version of `path`, or None."""
        with self._lock:
            if (path, version) in self._memory:
                return self._memory[(path, version)]
            if (path, version) in self._absent:
                return None
        try:
            with open(self._file(path, version), encoding="utf-8") as handle:
                summary = json.load(handle)
        except (OSError, ValueError):
            with self._lock:
                self._absent.add((path, version))
            return None
        with self._lock:
            self._memory[(path, version)] = summary
        return summary

    def put(self, path, version, summary):
        with self._lock:
            self._memory[(path, version)] = summary
            self._absent.discard((path, version))
        target = self._file(path, version)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            handle, partial = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".partial-")
            with os.fdopen(handle, "w", encoding="utf-8") as output:
                json.dump(summary, output)
            os.replace(partial, target)
        except OSError:
            pass  # a read-only cache directory: kept in memory only
