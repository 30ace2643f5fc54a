"""Run-level analysis of a distributed run: the ranks' traces joined on one timeline, step by step."""
