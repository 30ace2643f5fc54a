"""Where a cold `analyze` spends its CPU time: model build, analyses, report, rules and JSON, each timed in CPU
seconds (time.process_time) in one process, repeated; prints the median of each stage.

`--root` runs another checkout's package (e.g. an older commit unpacked with `git archive`), so two versions
can be compared stage by stage on the same trace, alternating:

    python benchmarks/stages.py benchmarks/data/train_8gpu_75mb.xplane.pb --repeats 3
    python benchmarks/stages.py TRACE --root /tmp/old-checkout
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--root", default=os.path.join(HERE, ".."), help="the checkout whose package to time")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.root))
    from tb_gpu_advisor.pipeline import analyze_host, diagnose, finite, load_host_model, render_host_report
    from tb_gpu_advisor.report.finite import to_json
    from tb_gpu_advisor.report.host_report import with_diagnosis

    times = {}

    def timed(stage, work, *values):
        started = time.process_time()
        result = work(*values)
        times.setdefault(stage, []).append(time.process_time() - started)
        return result

    for _ in range(args.repeats):
        model = timed("model", load_host_model, args.trace)
        analysis = timed("analyses", analyze_host, model)
        report = timed("report", render_host_report, model, analysis)
        diagnosis = timed("rules", diagnose, model, analysis)
        timed("json", lambda report, diagnosis: to_json(finite(with_diagnosis(report, diagnosis))), report, diagnosis)
    medians = {stage: round(statistics.median(values), 3) for stage, values in times.items()}
    medians["total"] = round(sum(medians.values()), 3)
    print(json.dumps({"root": os.path.abspath(args.root), "load_avg": os.getloadavg(), "cpu_s": medians}))


if __name__ == "__main__":
    main()
