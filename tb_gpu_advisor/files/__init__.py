"""Finding profile files, local or remote: which files are profiles, how a logdir lists into runs and hosts,
what a path names."""
