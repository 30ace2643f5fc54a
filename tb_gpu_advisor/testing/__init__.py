"""Writes schema-faithful `.xplane.pb` traces from a few lines of scenario code (tests, demos, benchmarks)."""

from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.timelines import GpuPlane, HostThread

__all__ = ["GpuPlane", "HostThread", "TraceBuilder"]
