"""Reader of PyTorch profiler (Kineto) Chrome-trace JSON files into the trace model."""
