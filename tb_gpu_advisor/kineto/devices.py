"""DeviceCapabilities of a GPU from a Kineto trace's deviceProperties, completed by the published-spec table."""

from tb_gpu_advisor.constants import MAX_DEVICE_NAME_CHARS
from tb_gpu_advisor.kineto.gpu_specs import published_spec
from tb_gpu_advisor.model.trace import DeviceCapabilities


def device_events_name(ordinal):
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


def capabilities(properties, ordinal):
    """DeviceCapabilities of device `ordinal`; clock and bandwidth from gpu_specs, or None when not listed.

    ROCm fills computeMajor/Minor with the gfx version (9.0 for gfx90a), not a CUDA compute capability, so
    AMD devices get none.
    """
    entry = None
    if isinstance(properties, list):
        entry = next((p for p in properties if isinstance(p, dict) and p.get("id") == ordinal), None)
    if entry is None:
        return DeviceCapabilities()
    name = entry.get("name")[:MAX_DEVICE_NAME_CHARS] if isinstance(entry.get("name"), str) else None
    vendor = _vendor(name or "")
    memory = _positive(entry.get("totalGlobalMem"))
    spec = published_spec(name, memory)
    major, minor = entry.get("computeMajor"), entry.get("computeMinor")
    capability = None
    if vendor != "AMD" and _positive(major) and isinstance(minor, int) and not isinstance(minor, bool) \
            and minor >= 0:
        capability = (major, minor)
    return DeviceCapabilities(
        model_name=name or None,
        vendor=vendor,
        sm_count=_positive(entry.get("numSms")),
        clock_mhz=float(spec.clock_mhz) if spec else None,
        memory_bandwidth_bytes_per_s=spec.memory_bandwidth_bytes_per_s if spec else None,
        memory_bytes=memory,
        compute_capability=capability,
    )
