"""Readers of the profile formats (XPlane protobuf, Kineto JSON, HLO modules) into the format-neutral trace model."""
