"""DeviceCapabilities of a GPU from a Kineto trace's deviceProperties, completed by the published-spec table."""

from __future__ import annotations

from dataclasses import replace

from tb_gpu_advisor.constants import MAX_DEVICE_NAME_CHARS
from tb_gpu_advisor.readers.kineto.gpu_specs import published_spec
from tb_gpu_advisor.readers.kineto.values import clean_text
from tb_gpu_advisor.model.device_limits import checked_capabilities
from tb_gpu_advisor.model.trace import DeviceCapabilities
from tb_gpu_advisor.model.device_identity import identified


def device_events_name(ordinal: int) -> str:
    """The device's name in reports, as the XPlane reader names GPU planes."""
    return f"/device:GPU:{ordinal}"


def _vendor(name):
    lowered = name.lower()
    if "amd" in lowered or "radeon" in lowered or "instinct" in lowered:
        return "AMD"
    if any(word in lowered for word in ("nvidia", "tesla", "geforce", "quadro", "rtx")):
        return "Nvidia"
    return None


def _positive(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _present(value):
    """A recorded number (checked by model.device_limits), else None: 0 and non-numbers mean not recorded."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0 else None


def capabilities(properties: object, ordinal: int) -> tuple[DeviceCapabilities, tuple[str, ...]]:
    """(DeviceCapabilities of device `ordinal`, warnings): clock and bandwidth from gpu_specs, or None when not
    listed; a property no GPU has (model.device_limits) is left out with a warning.

    ROCm fills computeMajor/Minor with the gfx version (9.0 for gfx90a), not a CUDA compute capability, so
    AMD devices get none.
    """
    entry = None
    if isinstance(properties, list):
        entry = next((p for p in properties if isinstance(p, dict) and p.get("id") == ordinal), None)
    if entry is None:
        return DeviceCapabilities(), ()
    written = entry.get("name")
    name = clean_text(written[:MAX_DEVICE_NAME_CHARS]) if isinstance(written, str) else None
    vendor = _vendor(name or "")
    major, minor = entry.get("computeMajor"), entry.get("computeMinor")
    capability = None
    if vendor != "AMD" and _positive(major) and isinstance(minor, int) and not isinstance(minor, bool) and minor >= 0:
        capability = (major, minor)
    memory = entry.get("totalGlobalMem")
    caps, warnings = checked_capabilities(
        DeviceCapabilities(
            model_name=name or None,
            vendor=vendor,
            sm_count=_present(entry.get("numSms")),
            memory_bytes=_present(memory),
            compute_capability=capability,
        ),
        device_events_name(ordinal),
    )
    spec = published_spec(caps.model_name, caps.memory_bytes)
    return identified(
        replace(
            caps,
            clock_mhz=float(spec.clock_mhz) if spec else None,
            memory_bandwidth_bytes_per_s=spec.memory_bandwidth_bytes_per_s if spec else None,
        )
    ), warnings
