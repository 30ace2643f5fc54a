"""`tb-gpu-advisor serve LOGDIR`: TensorBoard with its default plugins and the GPU Advisor tab next to Profile."""

import os
import sys
import threading

from tensorboard import default, program
from tensorboard.plugins import base_plugin

from tb_gpu_advisor.constants import PLUGIN_NAME
from tb_gpu_advisor.errors import EXIT_BAD_INPUT, EXIT_OK
from tb_gpu_advisor.plugin.loader import GpuAdvisorLoader
from tb_gpu_advisor.remote import is_remote_url
from tb_gpu_advisor.remote.cache import default_cache_dir


def ordered_plugins():
    """TensorBoard's static and dynamic plugins with ours placed right after the Profile tab's loader."""
    others = [p for p in default.get_dynamic_plugins() if p is not GpuAdvisorLoader]
    profile = [i for i, p in enumerate(others) if "profile" in getattr(p, "__module__", "")]
    at = profile[-1] + 1 if profile else len(others)
    return default.get_static_plugins() + others[:at] + [GpuAdvisorLoader] + others[at:]


def tensorboard_reads(url):
    """True when TensorBoard's own file systems (TensorFlow's, when installed) know the URL's scheme."""
    scheme = str(url).split("://", 1)[0].lower()
    try:
        from tensorboard.compat import tf

        return scheme in tf.io.gfile.get_registered_schemes()
    except Exception:  # no TensorFlow (TensorBoard's stub has no such list), or a broken install
        return False


def logdir_flags(logdir):
    """TensorBoard's --logdir for `logdir`; a URL TensorBoard cannot read (s3:// with TensorFlow 2.21, az://...)
    goes to our tab alone (--gpu_advisor_logdir) and TensorBoard gets an empty local directory, outside the
    logdir, so that it starts."""
    logdir = str(logdir)
    if not is_remote_url(logdir) or tensorboard_reads(logdir):
        return ["--logdir", logdir]
    empty = os.path.join(default_cache_dir(), "empty_logdir")
    os.makedirs(empty, exist_ok=True)
    return ["--logdir", empty, "--gpu_advisor_logdir", logdir]


def start(logdir, port=6006, host="127.0.0.1", extra_flags=()):
    """Starts TensorBoard in a daemon thread; returns the URL of the GPU Advisor tab."""
    board = program.TensorBoard(plugins=ordered_plugins())
    board.configure(["tensorboard", *logdir_flags(logdir), "--port", str(port), "--host", host, *extra_flags])
    return f"{board.launch()}#{PLUGIN_NAME}"


def serve(logdir, port=6006, host="127.0.0.1", out=None, err=None, stop=None, extra_flags=()):
    """Starts TensorBoard, prints the tab's URL and serves until Ctrl-C (or until `stop` is set).

    Returns EXIT_OK, or EXIT_BAD_INPUT when TensorBoard cannot start (port in use, bad address).
    """
    out, err = out or sys.stdout, err or sys.stderr
    try:
        url = start(logdir, port=port, host=host, extra_flags=extra_flags)
    except (program.TensorBoardServerException, base_plugin.FlagsError, ValueError) as error:
        print(f"error: cannot start TensorBoard: {getattr(error, 'msg', error)}", file=err)
        return EXIT_BAD_INPUT
    print(f"GPU Advisor at {url} (Ctrl-C to stop)", file=out, flush=True)
    stop = stop or threading.Event()
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    return EXIT_OK
