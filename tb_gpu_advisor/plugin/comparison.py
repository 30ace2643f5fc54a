"""The /compare route's parameters: which two hosts to compare (ids looked up in discovery), its 202 body."""

from tb_gpu_advisor.plugin import params


def comparison_targets(index, args):
    """((baseline ProfileRun, HostFile), (candidate ProfileRun, HostFile)) named by the query `args`.

    Every id is validated (400) before any lookup (404). Without `baseline_host` the baseline's host is the one
    named like the candidate's host, else the baseline run's only host; a run with several hosts and none of
    that name is a 400 that lists them.
    """
    run = params.identifier(args, "run", allow_slash=True)
    host = params.identifier(args, "host")
    baseline_run = params.identifier(args, "baseline_run", allow_slash=True)
    baseline_host = params.identifier(args, "baseline_host") if args.get("baseline_host") else None
    candidate = index.lookup(run, host)
    if baseline_host is None:
        hosts = [host_file.host for host_file in index.lookup_run(baseline_run).hosts]
        if host in hosts:
            baseline_host = host
        elif len(hosts) == 1:
            baseline_host = hosts[0]
        else:
            raise params.bad_request(
                f"run {baseline_run!r} has no host {host!r}: name one with baseline_host ({', '.join(hosts)})"
            )
    return index.lookup(baseline_run, baseline_host), candidate


def pending_body(service, baseline, candidate):
    """The 202 answer while a comparison runs: both ids, its state, and the state of each side's analysis."""
    baseline_file, candidate_file = baseline[1], candidate[1]
    return {
        **ids(baseline, candidate),
        **service.comparison_status(baseline_file, candidate_file),
        "baseline": service.status(baseline_file),
        "candidate": service.status(candidate_file),
    }


def ids(baseline, candidate):
    """The four ids a /compare answer starts with."""
    return {
        "run": candidate[0].run,
        "host": candidate[1].host,
        "baseline_run": baseline[0].run,
        "baseline_host": baseline[1].host,
    }
