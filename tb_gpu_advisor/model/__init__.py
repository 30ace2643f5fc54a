"""The trace model: what the GPUs and the host did, in columnar arrays, independent of XPlane layout."""
