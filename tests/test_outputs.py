"""Every file a run or a report writes (-o, --summary-json, --junit-xml, --markdown, report -o):
it never names the input, never replaces what stands at its path (a link, a FIFO, a results file
a run is writing), follows the umask, and a path it cannot write (missing, read-only, locked,
full) is a message with its own exit code, never a traceback."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import invoke

from localeval.data.files import atomic_text
from localeval.errors import EXIT_USAGE, ConfigError

NONLLM = ["-m", "nonllm_context_recall", "-m", "id_context_recall"]


RECALLED = {"id": "q2", "retrieved_contexts": ["The tower was completed on 31 March 1889."], "reference_contexts": ["The tower was completed on 31 March 1889."]}


@pytest.mark.parametrize("through", ["path", "symlink", "relative"])
def test_output_naming_the_input_is_refused_and_the_input_kept(write_jsonl, tmp_path, monkeypatch, through):
    data = write_jsonl([RECALLED])
    before = data.read_bytes()
    target = str(data)
    if through == "symlink":
        (tmp_path / "link.jsonl").symlink_to(data)
        target = str(tmp_path / "link.jsonl")
    elif through == "relative":
        monkeypatch.chdir(tmp_path)
        target = f"./{data.name}"
    for option in ("-o", "--summary-json", "--junit-xml", "--markdown"):
        result = invoke(["score", str(data), *NONLLM, option, target])
        assert result.exit_code == EXIT_USAGE and "same file as INPUT" in result.stderr, (option, result.output)
        assert data.read_bytes() == before


def test_report_output_naming_its_input_is_refused(write_jsonl, tmp_path):
    out = tmp_path / "r.jsonl"
    invoke(["score", str(write_jsonl([RECALLED])), *NONLLM, "-o", str(out)])
    before = out.read_bytes()
    result = invoke(["report", str(out), "-o", str(out)])
    assert result.exit_code == EXIT_USAGE and "same file as RESULTS" in result.stderr
    assert out.read_bytes() == before


def test_a_second_run_on_a_locked_output_is_told_and_writes_nothing(write_jsonl, tmp_path):
    data = write_jsonl([RECALLED])
    out = tmp_path / "r.jsonl"
    out.write_text("someone else's partial run\n")
    with open(out, "r+") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        result = invoke(["score", str(data), *NONLLM, "-o", str(out)])
    assert result.exit_code == EXIT_USAGE and "being written by another localeval run" in result.stderr
    assert out.read_text() == "someone else's partial run\n"


@pytest.mark.parametrize("where", ["missing directory", "read-only directory"])
def test_unwritable_outputs_are_messages_not_tracebacks(write_jsonl, tmp_path, where):
    data = write_jsonl([RECALLED])
    directory = tmp_path / "nowhere"
    if where == "read-only directory":
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only directories")
        directory.mkdir()
        directory.chmod(0o500)
    for option in ("-o", "--summary-json", "--junit-xml", "--markdown"):
        result = invoke(["score", str(data), *NONLLM, option, str(directory / "x")])
        assert result.exit_code == EXIT_USAGE and "cannot write" in result.stderr and "Traceback" not in result.output, option


def test_a_read_only_filesystem_is_a_message(write_jsonl):
    data = write_jsonl([RECALLED])
    result = invoke(["score", str(data), *NONLLM, "-o", "/proc/localeval-results.jsonl"])
    assert result.exit_code == EXIT_USAGE and "cannot write" in result.stderr


def test_a_report_written_through_a_symlink_keeps_the_link(write_jsonl, tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "summary.json"
    link.symlink_to(target)
    result = invoke(["score", str(write_jsonl([RECALLED])), *NONLLM, "--summary-json", str(link), "-q"])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and json.loads(target.read_text())["metrics"]


def test_a_report_to_a_fifo_is_written_through_not_replaced(write_jsonl, tmp_path):
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = invoke(["score", str(write_jsonl([RECALLED])), *NONLLM, "--summary-json", str(fifo), "-q"])
    reader.join()
    assert result.exit_code == 0, result.output
    assert fifo.is_fifo() and json.loads(received[0])["metrics"]


def test_a_new_report_file_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_text(str(tmp_path / "r.md"), "--markdown") as out:
            out.write("x")
    finally:
        os.umask(old)
    assert (tmp_path / "r.md").stat().st_mode & 0o777 == 0o644


def test_output_piped_into_head_stops_quietly(write_jsonl, tmp_path):
    data = write_jsonl([{**RECALLED, "id": f"q{i}"} for i in range(20000)])
    command = f"{sys.executable} -m localeval score {data} -m id_context_recall -o - -q | head -c 100 > /dev/null; echo ${{PIPESTATUS[0]}}"
    finished = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300)
    assert finished.stdout.strip() in ("0", "141"), finished.stderr  # 0: it finished before head left
    assert "Traceback" not in finished.stderr and "internal error" not in finished.stderr


def test_a_report_is_never_renamed_over_a_results_file_a_run_is_writing(tmp_path):
    from localeval.data.files import atomic_text, locked_for_writing

    results = tmp_path / "out.jsonl"
    with locked_for_writing(str(results)) as handle:
        handle.write(b"rows\n")
        handle.flush()
        with pytest.raises(ConfigError, match="being written by a running localeval"):
            with atomic_text(str(results), "--markdown") as out:
                out.write("report")
        assert results.read_bytes() == b"rows\n"
    with atomic_text(str(results), "--markdown") as out:  # once the run is over, it is a file like any other
        out.write("report")
    assert results.read_text() == "report"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
@pytest.mark.parametrize("flag", ["--summary-json", "--junit-xml", "--markdown", "-o"])
def test_a_full_disk_exits_3_whichever_file_it_is(tmp_path, flag):
    from click.testing import CliRunner

    from localeval.cli import cli

    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps({"retrieved_context_ids": [1], "reference_context_ids": [1]}) + "\n", encoding="utf-8")
    extra = [] if flag == "-o" else ["-o", str(tmp_path / "out.jsonl")]
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", *extra, flag, "/dev/full", "-q"])
    assert result.exit_code == 3, result.output
    assert "/dev/full" in result.output and "No space left on device" in result.output and "bug" not in result.output
