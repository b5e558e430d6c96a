"""The verdict cache (localeval.judge.cache, verdict_store): a hit is the judge's own answer, the
judge is loaded only on a miss, and nothing a machine or a user does to the cache file fails a
run or serves another key's answer: two runs at once, kill -9 in a write, a corrupt, truncated
or future-format file, a read-only or full disk. Real sqlite files, real processes, the real
small judge (SmolLM2-135M) where a judge answers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SMALL_MODEL, invoke, result_rows

from localeval.judge.cache import CachedJudge, cache_path, default_cache_path, digest
from localeval.judge.verdict_store import FORMAT_VERSION, VerdictStore, store_info

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
JUDGED = ["-m", "faithfulness", "--grader", "judge", "--n-ctx", "2048"]  # one judge metric: these tests are about the cache


def value_of(key: bytes) -> str:
    """A value that names its key: a value read under another key is seen at once."""
    return json.dumps({"for": key.hex(), "pad": "x" * 200})


def keys(count: int, tag: str = "k") -> list[bytes]:
    return [digest(tag, index) for index in range(count)]


WRITER = """
import json, sys
from pathlib import Path
from localeval.judge.cache import digest
from localeval.judge.verdict_store import VerdictStore
store = VerdictStore(Path(sys.argv[1]))
tag, count = sys.argv[2], int(sys.argv[3])
for index in range(count):
    key = digest(tag, index)
    store.put(key, json.dumps({"for": key.hex(), "pad": "x" * 200}))
    if index == 20:
        print("writing", flush=True)
store.close()
print("done", flush=True)
"""


def run_writer(path: Path, tag: str, count: int, **kwargs: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, str(count)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def check_every_entry(path: Path, tags: dict[str, int]) -> int:
    """Each entry present is its own key's value; how many are present."""
    store = VerdictStore(path)
    found = 0
    for tag, count in tags.items():
        for key in keys(count, tag):
            value = store.get(key)
            if value is not None:
                assert json.loads(value)["for"] == key.hex()
                found += 1
    store.close()
    return found


# -- the store --------------------------------------------------------------------------


def test_an_entry_reads_back_under_its_key_only(tmp_path: Path) -> None:
    store = VerdictStore(tmp_path / "c.sqlite")
    first, second = keys(2)
    store.put(first, value_of(first))
    assert store.get(first) == value_of(first)
    assert store.get(second) is None
    store.close()
    assert check_every_entry(tmp_path / "c.sqlite", {"k": 2}) == 1


def test_a_value_that_changed_on_disk_is_a_miss_not_an_answer(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = VerdictStore(path)
    first, second = keys(2)
    store.put(first, value_of(first))
    store.put(second, value_of(second))
    store.close()
    with sqlite3.connect(path) as connection:  # swap the two values, as a damaged page might
        connection.execute("UPDATE entries SET value = ? WHERE key = ?", (value_of(second), first))
    store = VerdictStore(path)
    assert store.get(first) is None
    assert store.get(second) == value_of(second)
    store.close()


def test_least_recently_used_entries_are_evicted_beyond_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = VerdictStore(path, max_bytes=60_000)
    old, new = keys(200, "old"), keys(200, "new")
    for key in [*old, *new]:
        store.put(key, value_of(key))
    assert store.get(old[0]) is not None  # used again: kept over the entries written after it
    store.close()
    info = store_info(path, 60_000)
    assert info.entry_bytes <= 60_000 and info.entries < 200
    store = VerdictStore(path)
    assert store.get(new[-1]) is not None and store.get(old[0]) is not None and store.get(old[1]) is None
    store.close()


def test_two_processes_write_one_cache_at_once(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    writers = [run_writer(path, tag, 400) for tag in ("a", "b")]
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0 and "done" in out, err
        assert "warning" not in err
    assert check_every_entry(path, {"a": 400, "b": 400}) == 800


def test_a_file_another_run_is_preparing_is_waited_for_not_given_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs opening a new cache file at once: switching it to the write-ahead log takes the
    whole file, and sqlite answers "database is locked" there at once, without its busy timeout
    (seen once in CI, two writers starting together). The store tries again until the other run is
    done, instead of scoring its run without the cache."""
    prepare = VerdictStore._prepare
    refusals = []

    def locked_twice(self: VerdictStore, connection: sqlite3.Connection) -> None:
        if len(refusals) < 2:
            refusals.append(1)
            raise sqlite3.OperationalError("database is locked")
        prepare(self, connection)

    monkeypatch.setattr(VerdictStore, "_prepare", locked_twice)
    store = VerdictStore(tmp_path / "c.sqlite")
    first = keys(1)[0]
    store.put(first, value_of(first))
    assert store.get(first) == value_of(first) and len(refusals) == 2
    store.close()
    assert "warning" not in capsys.readouterr().err


def test_kill_9_in_the_middle_of_writing_loses_nothing_committed(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    writer = run_writer(path, "a", 1_000_000)
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "writing"  # the writer is in its loop, committing
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=60)
    assert writer.returncode == -signal.SIGKILL
    found = check_every_entry(path, {"a": 5000})
    assert found >= 21  # every write before "writing" was committed; each entry present is its own
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_file_that_is_no_database_warns_once_and_is_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"not sqlite at all " * 400)
    before = path.read_bytes()
    store = VerdictStore(path)
    first = keys(1)[0]
    store.put(first, value_of(first))
    assert store.get(first) is None
    store.close()
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and "cannot be used (not an sqlite file: not a verdict cache)" in err
    assert "cache clear" not in err  # which would refuse it: it may be the data or a model named by --cache
    assert path.read_bytes() == before


def test_a_truncated_file_never_serves_another_keys_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.sqlite"
    store = VerdictStore(path)
    for key in keys(2000):
        store.put(key, value_of(key))
    store.close()
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)
    found = check_every_entry(path, {"k": 2000})  # each present entry is checked against its key
    assert found < 2000
    assert capsys.readouterr().err.count("warning") <= 1


def test_a_file_of_a_future_format_is_not_read_or_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.sqlite"
    store = VerdictStore(path)
    first = keys(1)[0]
    store.put(first, value_of(first))
    store.close()
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version={FORMAT_VERSION + 1}")
    before = path.read_bytes()
    store = VerdictStore(path)
    assert store.get(first) is None
    store.put(keys(2)[1], "x")
    store.close()
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and "later localeval" in err
    assert path.read_bytes() == before


FULL_DISK_WRITER = WRITER.replace("store = VerdictStore", "import resource, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\nresource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))\nstore = VerdictStore")


def test_a_full_disk_warns_once_and_keeps_what_was_written(tmp_path: Path) -> None:
    """A file size limit (RLIMIT_FSIZE) makes the disk full for the writer: its writes fail with
    EFBIG, as with ENOSPC; the writer finishes, warns once, and the entries before stay readable."""
    path = tmp_path / "c.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", FULL_DISK_WRITER, str(path), "a", "3000"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "done" in done.stdout, done.stderr
    assert done.stderr.count("warning") == 1 and "new answers are not kept" in done.stderr
    assert 0 < check_every_entry(path, {"a": 3000}) < 3000


def test_a_cache_that_cannot_be_made_runs_uncached(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    store = VerdictStore(blocker / "c.sqlite")  # its folder would be a file
    first = keys(1)[0]
    store.put(first, value_of(first))
    assert store.get(first) is None
    store.close()
    assert capsys.readouterr().err.count("warning") == 1


def test_cache_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOCALEVAL_CACHE", "off")
    assert cache_path(None) is None and cache_path(False) is None
    assert cache_path(str(tmp_path / "x.sqlite")) == tmp_path / "x.sqlite"
    monkeypatch.setenv("LOCALEVAL_CACHE", str(tmp_path / "env.sqlite"))
    assert cache_path(None) == tmp_path / "env.sqlite"
    monkeypatch.delenv("LOCALEVAL_CACHE")
    monkeypatch.setenv("LOCALEVAL_HOME", str(tmp_path))
    assert cache_path(None) == default_cache_path() == tmp_path / "verdicts.sqlite"


def test_cache_info_and_clear(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = VerdictStore(path)
    for key in keys(10):
        store.put(key, value_of(key))
    store.close()
    shown = invoke(["cache", "info", "--cache", str(path)])
    assert shown.exit_code == 0 and "entries: 10 " in shown.output
    cleared = invoke(["cache", "clear", "--cache", str(path)])
    assert cleared.exit_code == 0 and not path.exists()
    store = VerdictStore(path)
    store.put(b"k", "v")
    store.close()
    path.write_bytes(path.read_bytes()[:5000])  # a corrupt (truncated) cache is cleared too
    assert "cannot be read" in invoke(["cache", "info", "--cache", str(path)]).output
    assert invoke(["cache", "clear", "--cache", str(path)]).exit_code == 0 and not path.exists()
    assert "no verdict cache at" in invoke(["cache", "clear", "--cache", str(path)]).output


def test_cache_clear_deletes_no_file_that_is_not_a_cache(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"  # --cache naming the data (or a model) by mistake
    data.write_text('{"user_input": "q"}\n', encoding="utf-8")
    shown = invoke(["cache", "info", "--cache", str(data)])
    assert shown.exit_code == 0 and "not a verdict cache" in shown.output and "cache clear" not in shown.output
    cleared = invoke(["cache", "clear", "--cache", str(data)])
    assert cleared.exit_code == 2 and "is not a verdict cache (not an sqlite file): nothing was deleted" in cleared.output
    assert data.read_text(encoding="utf-8") == '{"user_input": "q"}\n'
    path = tmp_path / "c.sqlite"
    VerdictStore(path).close()
    (tmp_path / "c.sqlite-wal").mkdir(exist_ok=True)  # something that cannot be deleted: a usage error, not a crash
    refused = invoke(["cache", "clear", "--cache", str(path)])
    assert refused.exit_code == 2 and "cannot delete the verdict cache" in refused.output and "Traceback" not in refused.output


# -- the judge behind it -------------------------------------------------------------


def test_a_hit_is_the_judges_own_answer_and_the_judge_loads_on_a_miss_only(small_model_path: Path, tmp_path: Path) -> None:
    from localeval.judge import load_judge
    from localeval.judge.prompts import NO, YES

    path = tmp_path / "c.sqlite"
    messages = [{"role": "user", "content": "Is Paris in France? Answer Yes or No."}]
    with load_judge(SMALL_MODEL, n_ctx=2048, cache=str(path)) as cold:
        assert isinstance(cold, CachedJudge) and not cold.loaded
        asked, usage = cold.choose(messages, "", (YES, NO))
        count = cold.count_tokens("Paris is in France.")
        description = cold.describe()
        assert cold.loaded and not usage.cached
    with load_judge(SMALL_MODEL, n_ctx=2048, cache=str(path)) as warm:
        again, hit = warm.choose(messages, "", (YES, NO))
        assert again == asked  # bit for bit
        assert hit.cached and hit.prompt_tokens == usage.prompt_tokens and hit.prompt_evaluated == 0 and hit.saved_seconds == usage.seconds
        assert warm.count_tokens("Paris is in France.") == count
        assert warm.describe() == description and warm.context_size == description["n_ctx"]
        assert not warm.loaded  # every answer was in the cache
    with load_judge(SMALL_MODEL, n_ctx=2048, cache=str(path)) as other:
        other.choose([{"role": "user", "content": "Is Rome in France? Answer Yes or No."}], "", (YES, NO))
        assert other.loaded  # another prompt: a miss
    with load_judge(SMALL_MODEL, n_ctx=1024, cache=str(path)) as smaller:
        _, fresh = smaller.choose(messages, "", (YES, NO))
        assert not fresh.cached  # another context size is another judge


def test_a_seed_changes_what_is_asked_not_what_is_chosen(small_model_path: Path, tmp_path: Path) -> None:
    from pydantic import BaseModel, Field

    from localeval.judge import load_judge
    from localeval.judge.prompts import NO, YES

    class Answer(BaseModel):
        answer: str = Field(max_length=20)

    path = tmp_path / "c.sqlite"
    messages = [{"role": "user", "content": "Name a colour. Answer in JSON."}]
    with load_judge(SMALL_MODEL, n_ctx=2048, seed=1, cache=str(path)) as first:
        first.choose(messages, "", (YES, NO))
        written, _ = first.ask(messages, Answer, 32)
    with load_judge(SMALL_MODEL, n_ctx=2048, seed=2, cache=str(path)) as second:
        assert second.choose(messages, "", (YES, NO))[1].cached
        assert not second.ask(messages, Answer, 32)[1].cached
    with load_judge(SMALL_MODEL, n_ctx=2048, seed=1, cache=str(path)) as third:
        again, usage = third.ask(messages, Answer, 32)
        assert usage.cached and again == written
        assert not third.ask(messages, Answer, 48)[1].cached  # another max_tokens


def first_samples(folder: Path, count: int) -> Path:
    """The README example's first `count` samples (the judge tests score few: they are about the cache)."""
    path = folder / f"first{count}.jsonl"
    path.write_text("".join(EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:count]), encoding="utf-8")
    return path


def score_args(out: Path, cache: Path | None, *extra: str, quiet: bool = True) -> list[str]:
    chosen = ["--cache", str(cache)] if cache is not None else ["--no-cache"]
    source = first_samples(out.parent, 1)
    return ["score", str(source), *JUDGED, "--model", SMALL_MODEL, "-o", str(out), *(["-q"] if quiet else []), *chosen, *extra]


def test_a_cached_run_writes_what_an_uncached_run_writes(small_model_path: Path, tmp_path: Path) -> None:
    """Two judge metrics that share prompts (SharedVerdicts within a batch, the cache across runs)."""
    cache, source = tmp_path / "c.sqlite", first_samples(tmp_path, 2)
    both = ["score", str(source), "-m", "context_recall", "-m", "faithfulness", "--grader", "judge", "--n-ctx", "2048", "--model", SMALL_MODEL]
    plain, cold, warm = tmp_path / "plain.jsonl", tmp_path / "cold.jsonl", tmp_path / "warm.jsonl"
    assert invoke([*both, "-q", "--no-timing", "--no-cache", "-o", str(plain)]).exit_code in (0, 1)
    assert not cache.exists()
    assert invoke([*both, "-q", "--no-timing", "--cache", str(cache), "-o", str(cold)]).exit_code in (0, 1)
    assert invoke([*both, "-q", "--no-timing", "--cache", str(cache), "-o", str(warm)]).exit_code in (0, 1)
    assert plain.read_bytes() == cold.read_bytes() == warm.read_bytes()
    timed, summary = tmp_path / "timed.jsonl", tmp_path / "summary.json"
    shown = invoke([*both, "--cache", str(cache), "-o", str(timed), "--summary-json", str(summary)])
    assert "from the verdict cache and 0 from the judge" in shown.output
    assert json.loads(timed.read_text().splitlines()[0])["run"]["verdict_cache"] == str(cache)
    assert "verdict_cache" not in json.loads(warm.read_text().splitlines()[0])["run"]
    usage = json.loads(summary.read_text())["metrics"]["context_recall"]
    assert usage["cached_answers"] > 0 and usage["judge_answers"] == 0 and usage["saved_seconds"] > 0
    assert all(row["timing"]["context_recall"]["cached"] > 0 for row in result_rows(timed))
    assert [row["usage"] for row in result_rows(timed)] == [row["usage"] for row in result_rows(plain)]  # calls and tokens as the judge reported them


NEVER_LOADED = """
import sys
from localeval.run.pipeline import score_file
from localeval.run.settings import build_settings
settings = build_settings({"input": sys.argv[1], "output": sys.argv[2], "metrics": ["faithfulness"], "options": {"faithfulness": {"grader": "judge"}}, "model": "smollm2-135m", "n_ctx": 2048, "cache": sys.argv[3], "timing": False})
score_file(settings)
print("llama_cpp loaded" if "llama_cpp" in sys.modules else "llama_cpp never loaded")
"""


def test_a_run_whose_prompts_are_all_cached_never_loads_llama_cpp(small_model_path: Path, tmp_path: Path) -> None:
    cache, first, second = tmp_path / "c.sqlite", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outputs = []
    for out in (first, second):
        done = subprocess.run([sys.executable, "-c", NEVER_LOADED, str(first_samples(tmp_path, 1)), str(out), str(cache)], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.strip())
    assert outputs == ["llama_cpp loaded", "llama_cpp never loaded"]
    assert first.read_bytes() == second.read_bytes()


def test_two_runs_share_one_cache_at_once(small_model_path: Path, tmp_path: Path) -> None:
    cache, plain = tmp_path / "c.sqlite", tmp_path / "plain.jsonl"
    assert invoke(score_args(plain, None, "--no-timing")).exit_code in (0, 1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outs = [tmp_path / "one.jsonl", tmp_path / "two.jsonl"]
    runs = [
        subprocess.Popen([sys.executable, "-m", "localeval", *score_args(out, cache, "--no-timing")[0:]], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for out in outs
    ]
    for run in runs:
        _, err = run.communicate(timeout=600)
        assert run.returncode in (0, 1), err
        assert "warning" not in err
    assert outs[0].read_bytes() == outs[1].read_bytes() == plain.read_bytes()


def read_only_prefix(folder: Path) -> list[str] | None:
    """A command prefix that runs a command with `folder` read-only (a bind mount in a mount
    namespace of its own), or None where this machine does not allow it (not root)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    probe = subprocess.run([unshare, "-m", "sh", "-c", f"mount --bind '{folder}' '{folder}' && mount -o remount,bind,ro '{folder}' && ! touch '{folder}/probe'"], capture_output=True)
    if probe.returncode != 0:
        return None
    return [unshare, "-m", "sh", "-c", f"mount --bind '{folder}' '{folder}' && mount -o remount,bind,ro '{folder}' && exec \"$0\" \"$@\""]


def test_a_read_only_cache_is_read_and_not_written(small_model_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    cache, warm = folder / "c.sqlite", tmp_path / "warm.jsonl"
    assert invoke(score_args(tmp_path / "cold.jsonl", cache, "--no-timing")).exit_code in (0, 1)
    prefix = read_only_prefix(folder)
    if prefix is None:
        if os.geteuid() == 0:
            pytest.skip("no mount namespace here to make a folder read-only for root")
        folder.chmod(0o555)
        cache.chmod(0o444)
        prefix = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = cache.read_bytes()
    done = subprocess.run([*prefix, sys.executable, "-m", "localeval", *score_args(warm, cache, "--no-timing")], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr.count("warning") == 1 and "cannot be written" in done.stderr
    assert warm.read_bytes() == (tmp_path / "cold.jsonl").read_bytes()
    assert cache.read_bytes() == before


def test_a_full_disk_run_scores_as_an_uncached_one(small_model_path: Path, tmp_path: Path) -> None:
    cache, plain, full = tmp_path / "c.sqlite", tmp_path / "plain.jsonl", tmp_path / "full.jsonl"
    assert invoke(score_args(plain, None, "--no-timing")).exit_code in (0, 1)
    script = (
        "import resource, runpy, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, resource.RLIM_INFINITY))\n"
        "sys.argv = ['localeval', *sys.argv[1:]]\n"
        "runpy.run_module('localeval', run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, *score_args(full, cache, "--no-timing")[0:]], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr.count("warning") == 1 and "verdict cache" in done.stderr
    assert full.read_bytes() == plain.read_bytes()


def test_no_cache_makes_no_file_and_the_config_can_turn_it_off(small_model_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCALEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LOCALEVAL_CACHE")
    monkeypatch.setenv("LOCALEVAL_MODEL", str(small_model_path))
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(first_samples(tmp_path, 1), data / "samples.jsonl")
    (data / "localeval.toml").write_text('[judge]\ncache = false\nn_ctx = 2048\n')
    args = ["score", str(data / "samples.jsonl"), "-m", "faithfulness", "--grader", "judge", "-q", "-o", str(tmp_path / "out.jsonl")]
    assert invoke(args).exit_code in (0, 1)
    assert not (tmp_path / "home" / "verdicts.sqlite").exists()
    (data / "localeval.toml").write_text('[judge]\ncache = "here.sqlite"\nn_ctx = 2048\n')
    assert invoke(args).exit_code in (0, 1)
    assert (data / "here.sqlite").is_file()  # a config's path is read from the config's folder
    (data / "here.sqlite").unlink()
    assert invoke([*args, "--no-cache"]).exit_code in (0, 1)  # the command line's --no-cache over the config's path
    assert not (data / "here.sqlite").exists() and not (tmp_path / "home" / "verdicts.sqlite").exists()
    both = invoke([*args, "--cache", "x.sqlite", "--no-cache"])
    assert both.exit_code == 2 and "--no-cache" in both.output

