"""The report: the JSON HostReport contract and its text and markdown renderings."""
