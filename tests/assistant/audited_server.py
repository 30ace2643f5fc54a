"""Starts `tb-gpu-advisor mcp` with a Python audit hook that records every path the server opens or lists, one per
line, into the file named by $TB_GPU_ADVISOR_AUDIT_LOG: the client test checks nothing outside the logdirs is read."""

import os
import sys

_EVENTS = {"open", "os.listdir", "os.scandir", "io.open", "os.open"}


def _install(log_path):
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # opened before the hook: no recursion

    def hook(event, args):
        if event in _EVENTS and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            os.write(fd, (f"{event}\t{os.path.abspath(path)}\n").encode("utf-8", "backslashreplace"))

    sys.addaudithook(hook)


if __name__ == "__main__":
    _install(os.environ["TB_GPU_ADVISOR_AUDIT_LOG"])
    from tb_gpu_advisor.cli import main

    sys.exit(main(["mcp", *sys.argv[1:]]))
