"""How many cores this process may run on: its CPU affinity and its cgroup's CPU quota, not the host's count.

Why: `os.cpu_count()` counts the host's cores. A container limited to 2 CPUs (`docker --cpus=2`, a
Kubernetes limit, a CI runner's job container) on a 64-core host reads 64. The judge then starts
more llama.cpp threads than it may run, and llama.cpp gets slower, not faster: its threads wait
on each other at every layer, and a thread the quota has parked holds all the others up. The
affinity mask (`taskset`, `docker --cpuset-cpus`) and the cgroup's quota (cgroup v2 `cpu.max`,
v1 `cpu.cfs_quota_us` over `cpu.cfs_period_us`) bound what the process gets; the smaller wins.
A quota of 1.5 CPUs gives 1 thread: a thread more than the quota pays for is the slow case.
"""

from __future__ import annotations

import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")


def usable_cores(root: Path = CGROUP_ROOT, membership: Path = PROC_CGROUP) -> int:
    """The cores this process may keep busy at once: at least 1."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cpu_quota(root, membership)
    if quota is not None:
        cores = min(cores, int(quota))
    return max(1, cores)


def cpu_quota(root: Path = CGROUP_ROOT, membership: Path = PROC_CGROUP) -> float | None:
    """The CPUs' worth of time the process's cgroup may use (2.0 for `--cpus=2`), or None where no
    quota is set or none can be read. The cgroup's own directory is read where /proc/self/cgroup
    names one, then the mount's top (a container with its own cgroup namespace sees its cgroup there);
    the smallest quota found wins."""
    found = [q for q in (_quota(directory) for directory in _cgroup_directories(root, membership)) if q is not None]
    return min(found) if found else None


def _cgroup_directories(root: Path, membership: Path) -> list[Path]:
    """Where the process's CPU controller keeps its files: its own cgroup's directory (v2 `0::/path`,
    v1 a line naming the cpu controller) under the mount, and the mount's top, for both layouts."""
    tops = [root, root / "cpu", root / "cpu,cpuacct"]
    own: list[Path] = []
    try:
        lines = membership.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[2].strip("/"):
            continue
        relative = parts[2].strip("/")
        if parts[0] == "0" and parts[1] == "":
            own.append(root / relative)
        elif "cpu" in parts[1].split(","):
            own += [top / relative for top in tops[1:]]
    return own + tops


def _quota(directory: Path) -> float | None:
    """The quota one cgroup directory sets, in CPUs; None where it sets none or its files cannot be read."""
    try:
        if (directory / "cpu.max").is_file():  # cgroup v2: "max 100000" or "200000 100000"
            limit, _, period = (directory / "cpu.max").read_text(encoding="ascii").strip().partition(" ")
            return None if limit == "max" else _ratio(limit, period)
        if (directory / "cpu.cfs_quota_us").is_file():  # cgroup v1: -1 for none
            limit = (directory / "cpu.cfs_quota_us").read_text(encoding="ascii").strip()
            return _ratio(limit, (directory / "cpu.cfs_period_us").read_text(encoding="ascii").strip())
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _ratio(limit: str, period: str) -> float | None:
    try:
        quota, length = int(limit), int(period)
    except ValueError:
        return None
    return quota / length if quota > 0 and length > 0 else None
