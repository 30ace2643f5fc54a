"""Pure functions over the trace model: steps, utilization, kernels, launch, transfers, breakdown, balance."""
