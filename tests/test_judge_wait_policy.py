"""llama.cpp's OpenMP threads wait passively (OMP_WAIT_POLICY=PASSIVE) unless the user chose
otherwise: set before llama_cpp loads, so libgomp, which reads it once when it loads, sees it. A
spinning wait stalls the judge where other work shares the cores (docs/PERFORMANCE.md)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

from localeval.errors import ConfigError
from localeval.judge import serve
from localeval.judge.llama_runtime import WAIT_POLICY, wait_passively

# A fresh process loads the small judge, answers one prompt, then prints the policy as the C
# library's getenv (what libgomp reads) sees it, and the probability of the answer 'Yes', to the last bit.
LOAD_AND_READ = """
import ctypes, sys
from pathlib import Path
from localeval.judge.llama import LlamaJudge
with LlamaJudge(Path(sys.argv[1]), n_ctx=512, n_threads=2, seed=0) as judge:
    (yes, no), _ = judge.choose([{"role": "user", "content": "Is Paris in France? Answer Yes or No."}], "", ["Yes", "No"])
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
print(libc.getenv(b"OMP_WAIT_POLICY").decode(), repr(yes))
"""


def test_the_default_is_passive_and_a_users_choice_is_kept():
    environ: dict[str, str] = {}
    wait_passively(environ)
    assert environ == {WAIT_POLICY: "PASSIVE"}
    chosen = {WAIT_POLICY: "ACTIVE"}
    wait_passively(chosen)
    assert chosen == {WAIT_POLICY: "ACTIVE"}


def _policy_seen_by_a_loaded_judge(model, **settings: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != WAIT_POLICY} | settings
    done = subprocess.run([sys.executable, "-c", LOAD_AND_READ, str(model)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()[-2:]


def test_a_loaded_judge_runs_with_passive_waits_unless_the_user_set_the_policy(small_model_path):
    passive, yes_passive = _policy_seen_by_a_loaded_judge(small_model_path)
    active, yes_active = _policy_seen_by_a_loaded_judge(small_model_path, OMP_WAIT_POLICY="ACTIVE")
    assert (passive, active) == ("PASSIVE", "ACTIVE")
    assert yes_passive == yes_active and 0.0 < float(yes_passive) < 1.0  # how threads wait never moves a verdict


def test_the_judge_server_sets_passive_waits_before_it_loads_llama_cpp(monkeypatch):
    monkeypatch.delenv(WAIT_POLICY, raising=False)
    with contextlib.suppress(ConfigError):  # without the server extra it stops after setting the policy
        serve._server_modules()
    assert os.environ[WAIT_POLICY] == "PASSIVE"
