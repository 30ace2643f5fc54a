"""Helpers that capture real profiles with an installed TensorFlow (optional extra)."""
