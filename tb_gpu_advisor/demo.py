"""`tb-gpu-advisor demo [DIR]`: writes (or reuses) the demo logdir, one run per scenario, and serves the tab."""

import os

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.plugin.serve_command import add_serve_arguments
from tb_gpu_advisor.scenarios import SCENARIOS

DEMO_TIMESTAMP = "2026_01_15_09_30_00"
DEFAULT_DIR = "demo_logs"


def run_path(directory, name, host):
    """Where TensorBoard expects the run `name`: `<dir>/<name>/plugins/profile/<timestamp>/<host>.xplane.pb`."""
    return os.path.join(directory, name, *PROFILE_SUBDIR, DEMO_TIMESTAMP, host + XPLANE_SUFFIX)


def _current(path, data):
    try:
        with open(path, "rb") as handle:
            return handle.read() == data
    except OSError:
        return False


def write_demo_logdir(directory, names=None):
    """Writes every scenario (or those in `names`) as a run of `directory`; returns the runs, in library order.

    Each run is a dict {name, run (the Profile tab's run id), path, title, written}. A file already holding the
    same bytes is left alone (`written` False), so TensorBoard's caches of an up-to-date demo stay valid.
    """
    runs = []
    for name, scenario in SCENARIOS.items():
        if names is not None and name not in names:
            continue
        builder = scenario.build()
        data = builder.to_bytes()
        path = run_path(directory, name, builder.hostname)
        written = not _current(path, data)
        if written:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temporary = path + ".tmp"
            with open(temporary, "wb") as handle:
                handle.write(data)
            os.replace(temporary, path)
        runs.append({"name": name, "run": f"{name}/{DEMO_TIMESTAMP}", "path": path, "title": scenario.title,
                     "written": written})
    return runs


def add_demo_command(commands):
    """Registers `demo` on the CLI's subparsers."""
    demo = commands.add_parser("demo", help="write the demo logdir: realistic GPU problems and their fixes",
                               description="Write (or reuse, if up to date) a TensorBoard logdir with one run "
                                           "per scenario of the library: GPU training problems and their fixes.")
    demo.add_argument("dir", nargs="?", default=DEFAULT_DIR, help="logdir to write (default: %(default)s)")
    demo.add_argument("--no-serve", action="store_true",
                      help="only write the logdir; do not start TensorBoard on it")
    add_serve_arguments(demo)
    demo.set_defaults(handler=_demo)


def _demo(args, out, err):
    runs = write_demo_logdir(args.dir)
    written = sum(run["written"] for run in runs)
    out.write(f"Demo logdir {args.dir}: {len(runs)} runs ({written} written, {len(runs) - written} up to date)\n")
    width = max(len(run["name"]) for run in runs)
    for run in runs:
        out.write(f"  {run['name']:<{width}}  {run['title']}\n")
    out.write(f"\nAnalyze one:  tb-gpu-advisor analyze {args.dir} --run {runs[0]['run']}\n")
    if args.no_serve:
        out.write(f"View them:    tb-gpu-advisor serve {args.dir}   (or: tensorboard --logdir {args.dir})\n")
        return 0
    out.write("\nStarting TensorBoard with the GPU Advisor tab on it...\n")
    out.flush()
    from tb_gpu_advisor.plugin.serve import serve  # imports tensorboard

    return serve(args.dir, port=args.port, host=args.host, out=out, err=err)
