"""Before/after comparison of two profiles: statistics, matching, verdict, CI gate and renderers."""
