"""`tb-gpu-advisor demo [DIR]`: writes (or reuses) the demo logdir, one run per scenario, and serves the tab."""

from tb_gpu_advisor.commands.serve import add_serve_arguments, tab_flags
from tb_gpu_advisor.demo import DEFAULT_DIR, write_demo_logdir
from tb_gpu_advisor.errors import EXIT_OK


def register(commands):
    """Registers `demo` on the CLI's subparsers."""
    demo = commands.add_parser(
        "demo",
        help="write the demo logdir: realistic GPU problems and their fixes",
        description="Write (or reuse, if up to date) a TensorBoard logdir with one run "
        "per scenario of the library: GPU training problems and their fixes.",
    )
    demo.add_argument("dir", nargs="?", default=DEFAULT_DIR, help="logdir to write (default: %(default)s)")
    demo.add_argument("--no-serve", action="store_true", help="only write the logdir; do not start TensorBoard on it")
    add_serve_arguments(demo)
    demo.set_defaults(handler=run)


def run(args, out, err):
    runs = write_demo_logdir(args.dir)
    written = sum(run["written"] for run in runs)
    out.write(f"Demo logdir {args.dir}: {len(runs)} runs ({written} written, {len(runs) - written} up to date)\n")
    width = max(len(run["name"]) for run in runs)
    for run in runs:
        out.write(f"  {run['name']:<{width}}  {run['title']}\n")
    out.write(f"\nAnalyze one:  tb-gpu-advisor analyze {args.dir} --run {runs[0]['run']}\n")
    if args.no_serve:
        out.write(f"View them:    tb-gpu-advisor serve {args.dir}   (or: tensorboard --logdir {args.dir})\n")
        return EXIT_OK
    out.write("\nStarting TensorBoard with the GPU Advisor tab on it...\n")
    out.flush()
    from tb_gpu_advisor.plugin.serve import serve  # imports tensorboard

    return serve(args.dir, port=args.port, host=args.host, out=out, err=err, extra_flags=tab_flags(args))
