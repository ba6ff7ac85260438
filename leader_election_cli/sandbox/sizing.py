"""How big a sandbox may be: a bound on total partitions and on the memory they are estimated to need.

The sandbox holds every partition as a Python object in one process. Measured with
benchmarks/sandbox_scale.py (CPython 3.11, 64-bit): about 560 + 16 x RF bytes a partition once built,
and about 1,150 + 50 x RF bytes at the peak, once a client has read every topic's Metadata (the answer
is encoded, then cached). The estimate below rounds those up; the bound on partitions keeps a build
to seconds (about 10 s for 1,000,000 partitions on one core) and its memory to a few GB.
"""

from __future__ import annotations

MAX_PARTITIONS = 2_000_000  # total over all topics
DEFAULT_MAX_LOG_BYTES = 256 * 2**20  # the records a sandbox keeps, all partitions together (partition_logs.py)
# consumer groups (groups/coordinator.py; group.max.size, 1000 members a group, is a broker config there)
MAX_GROUPS = 10_000  # groups in all
MAX_COMMITTED_OFFSETS = 100_000  # committed offsets in all (each at most 4 KiB of metadata)
MAX_GROUP_BYTES = 64 * 2**20  # the members' protocol metadata and assignments, all groups together
BASE_BYTES = 150 * 2**20  # the interpreter, kafka-python and the listeners
AVAILABLE_SHARE = 0.8  # of the memory the system reports available


def estimated_bytes(partitions: int, replication_factor: int) -> int:
    """Peak memory of a sandbox with `partitions` partitions of `replication_factor` replicas each."""
    return BASE_BYTES + partitions * (1_300 + 56 * replication_factor)


def available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux); None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def size_problem(partitions: int, replication_factor: int, available: int | None = None) -> str | None:
    """Why a sandbox of `partitions` partitions in all is too big, or None when it is not."""
    if partitions > MAX_PARTITIONS:
        return f"{partitions:,} partitions in all is more than the sandbox's bound of {MAX_PARTITIONS:,}"
    need = estimated_bytes(partitions, replication_factor)
    available = available_bytes() if available is None else available
    if available is not None and need > AVAILABLE_SHARE * available:
        return (f"{partitions:,} partitions of {replication_factor} replicas need about {need / 2**30:.1f} GiB, "
                f"more than {AVAILABLE_SHARE:.0%} of the {available / 2**30:.1f} GiB available")
    return None
