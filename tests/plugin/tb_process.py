"""Starts a real TensorBoard process on a free port and finds its URL (for the serve and browser tests)."""

import os
import re
import selectors
import signal
import subprocess
import sys
import time

_URL = re.compile(r"(http://[^\s]+?/)(?:#\S*)?(?:\s|$)")


class TensorBoardProcess:
    """`command` printing a `http://host:port/` URL on stdout or stderr; stopped on exit of the with-block."""

    def __init__(self, command, start_timeout_s=120):
        self.command = command
        self.start_timeout_s = start_timeout_s
        self.output = []
        self.process = None
        self.url = None

    def __enter__(self):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
        )
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + self.start_timeout_s
        while self.url is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError("TensorBoard did not start:\n" + "".join(self.output))
            if selector.select(timeout=1):
                line = self.process.stdout.readline()
                self.output.append(line)
                match = _URL.search(line)
                if match:
                    self.url = match.group(1)
        selector.close()
        return self

    def __exit__(self, *exc):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(15)
        if self.process:
            self.process.stdout.close()
        return False


def tensorboard_command(logdir):
    """The plain `tensorboard` entry point of this environment (it finds our plugin by its entry point)."""
    script = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    return [script, "--logdir", str(logdir), "--port", "0", "--host", "127.0.0.1"]


def serve_command(logdir):
    return [sys.executable, "-m", "tb_gpu_advisor", "serve", str(logdir), "--port", "0"]
