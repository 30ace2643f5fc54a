"""Calibration of the findings' predicted speedups against measured fixes: docs/calibration.md and its script."""
