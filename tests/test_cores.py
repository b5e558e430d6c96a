"""localeval.cores: a container's CPU quota and the affinity mask bound the judge's and the
encoder's threads, not the host's core count (a 2-CPU job on a 64-core host must not start 8
llama.cpp threads). The cgroup files are written under tmp_path in both layouts."""

from __future__ import annotations

import pytest

from localeval import cores
from localeval.judge.llama import default_threads
from localeval.verifier import batches


@pytest.fixture
def host_of_64(monkeypatch):
    monkeypatch.setattr(cores.os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    return monkeypatch


def cgroup(tmp_path, files: dict[str, str], membership: str = "0::/\n"):
    for name, text in files.items():
        path = tmp_path / "fs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="ascii")
    (tmp_path / "proc").write_text(membership, encoding="ascii")
    return tmp_path / "fs", tmp_path / "proc"


@pytest.mark.parametrize(
    "files, membership, quota",
    [
        ({"cpu.max": "200000 100000\n"}, "0::/\n", 2.0),  # cgroup v2, docker --cpus=2 with its own namespace
        ({"cpu.max": "max 100000\n"}, "0::/\n", None),  # no quota
        ({"kubepods/pod1/cpu.max": "150000 100000\n"}, "0::/kubepods/pod1\n", 1.5),  # v2, the process's own cgroup
        ({"cpu/cpu.cfs_quota_us": "400000\n", "cpu/cpu.cfs_period_us": "100000\n"}, "3:cpu,cpuacct:/\n", 4.0),  # v1
        ({"cpu/docker/abc/cpu.cfs_quota_us": "100000\n", "cpu/docker/abc/cpu.cfs_period_us": "100000\n",
          "cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, "4:cpu,cpuacct:/docker/abc\n", 1.0),  # v1, nested
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, "3:cpu,cpuacct:/\n", None),
        ({"cpu.max": "lots of it\n"}, "0::/\n", None),  # unreadable: no quota claimed
        ({}, "", None),  # no cgroup file system at all
    ],
)
def test_the_quota_is_read_from_either_cgroup_layout(tmp_path, files, membership, quota):
    root, proc = cgroup(tmp_path, files, membership)
    assert cores.cpu_quota(root, proc) == quota


def test_a_quota_bounds_the_cores_below_the_hosts_count_and_never_below_one(tmp_path, host_of_64):
    root, proc = cgroup(tmp_path, {"cpu.max": "200000 100000\n"})
    assert cores.usable_cores(root, proc) == 2
    root, proc = cgroup(tmp_path, {"cpu.max": "150000 100000\n"})
    assert cores.usable_cores(root, proc) == 1  # a thread more than the quota pays for is the slow case
    root, proc = cgroup(tmp_path, {"cpu.max": "50000 100000\n"})
    assert cores.usable_cores(root, proc) == 1
    root, proc = cgroup(tmp_path, {"cpu.max": "max 100000\n"})
    assert cores.usable_cores(root, proc) == 64
    host_of_64.setattr(cores.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)  # taskset -c 0-2
    assert cores.usable_cores(root, proc) == 3


def test_the_judge_and_the_encoder_take_their_threads_from_it(host_of_64):
    host_of_64.setattr(cores, "cpu_quota", lambda *args: 2.0)
    assert default_threads() == 2
    for name in batches.BLAS_THREAD_SETTINGS:
        host_of_64.delenv(name, raising=False)
    host_of_64.setenv("OPENBLAS_NUM_THREADS", "1")
    assert batches.worker_count() == 2
    host_of_64.setattr(cores, "cpu_quota", lambda *args: None)
    assert default_threads() == 8 and batches.worker_count() == 8  # at most 8 of the host's 64
