"""Issue 37's fourth hardening pass: calibrations that cannot lie, reports that refuse what they
cannot write, configs that say where data goes and read as their author meant."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.calibration import LogisticModel
from localeval.cli import cli
from localeval.errors import ConfigError
from localeval.provenance import resume_differences

ROOT = Path(__file__).resolve().parents[1]
FEATURES = ("judge", "missing")


@pytest.mark.parametrize("value", [1e308, -1e308, 1001.0, "0.5", True, None, float("nan")])
def test_a_calibration_coefficient_out_of_bounds_or_not_a_number_is_refused(value):
    with pytest.raises(ConfigError, match="calibration 'x'"):
        LogisticModel.from_table({"intercept": 0.0, "weights": {"judge": value, "missing": 0.0}}, "calibration 'x'", FEATURES)
    with pytest.raises(ConfigError, match="calibration 'x'"):
        LogisticModel.from_table({"intercept": value, "weights": {"judge": 1.0, "missing": 0.0}}, "calibration 'x'", FEATURES)


def test_the_largest_allowed_weights_still_give_a_probability():
    model = LogisticModel.from_table({"intercept": 1000, "weights": {"judge": 1000, "missing": -1000}}, "c", FEATURES)
    assert model.probability({"judge": -1e6, "missing": 1e6}) == pytest.approx(0.0, abs=1e-12)


def _results(tmp_path: Path) -> Path:
    data = tmp_path / "samples.jsonl"
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", data)
    out = tmp_path / "out.jsonl"
    assert CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "-o", str(out), "-q"]).exit_code == 0
    return out


def test_a_results_line_with_a_lone_surrogate_is_refused_by_number_and_the_rest_reported(tmp_path):
    out = _results(tmp_path)
    lines = out.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"id": "insulin"', '"id": "\\ud800"')
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["report", str(out), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and ":3:" in result.output and "Traceback" not in result.output
    assert "eiffel" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_report_refuses_a_file_it_cannot_read_twice(tmp_path):
    result = CliRunner().invoke(cli, ["report", "/dev/stdin", "-o", str(tmp_path / "r.html")], input=_results(tmp_path).read_text())
    assert result.exit_code == 2 and "not a regular file" in result.output


def test_a_config_with_a_bom_is_read_and_its_relative_paths_are_its_own(tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", data_dir / "samples.jsonl")
    (data_dir / "rubric.txt").write_text("{document} / {statement}: Yes or No?", encoding="utf-8")
    (data_dir / "localeval.toml").write_bytes(b'\xef\xbb\xbfmetrics = ["id_context_recall", "context_recall"]\n[options.context_recall]\nrubric = "rubric.txt"\n')
    monkeypatch.chdir(tmp_path)  # not the config's folder
    from localeval.settings import build_settings

    settings = build_settings({"input": str(data_dir / "samples.jsonl")})
    assert settings.options["context_recall"]["rubric"] == str(data_dir / "rubric.txt")


def test_a_configs_judge_server_is_announced_even_with_quiet(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", data_dir / "samples.jsonl")
    (data_dir / "localeval.toml").write_text('judge_url = "http://127.0.0.1:9/v1"\nmodel = "smollm2-135m"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", str(data_dir / "samples.jsonl"), "-m", "context_recall", "--no-verifier", "-q"])
    assert "sends the samples to the judge server at http://127.0.0.1:9/v1" in result.output
    quiet = CliRunner().invoke(cli, ["score", str(data_dir / "samples.jsonl"), "-m", "context_recall", "--verifier", "-q"])
    assert "sends the samples" not in quiet.output  # the verifier decides: nothing goes to the server


def test_a_resume_names_the_differing_key_with_both_values_and_ignores_speed_settings():
    before = {"input": {"sha256": "x"}, "metrics": {"m": {"threshold": 0.5, "long": "a" * 200}}, "judge": {"file": "f", "speed": {"n_threads": 2, "concurrency": 4}}}
    now = json.loads(json.dumps(before))
    now["judge"]["speed"] = {"concurrency": 1, "n_threads": 8, "timeout": 5.0}
    assert resume_differences(before, now) == []
    now["judge"]["n_batch"] = 256
    assert resume_differences(before, now) == ["judge.n_batch: (not set) then, 256 now"]
    del now["judge"]["n_batch"]
    now["metrics"]["m"]["threshold"] = 0.6
    assert resume_differences(before, now) == ["metrics.m.threshold: 0.5 then, 0.6 now"]


def test_a_broken_dependency_exits_three_with_one_line_never_one():
    import subprocess
    import sys

    code = "import sys; sys.modules['rapidfuzz'] = None; sys.argv = ['localeval', '--version']; from localeval.entry import main; main()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 3 and "cannot start" in done.stderr and "Traceback" not in done.stderr


def test_a_report_is_never_renamed_over_a_results_file_a_run_is_writing(tmp_path):
    from localeval.files import atomic_text, locked_for_writing

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


def test_calibrate_says_why_nothing_can_be_fitted_instead_of_crashing():
    from localeval.calibrating import LabelledRows, fit_relevance
    from localeval.errors import LocalevalError
    from localeval.fitting import fit_logistic
    from localeval.metrics.relevance import DEFAULT_CALIBRATION

    with pytest.raises(LocalevalError, match="nothing to fit"):
        fit_relevance(LabelledRows(questions=[[] for _ in range(25)], required=[set() for _ in range(25)]), DEFAULT_CALIBRATION)
    one_class = [[{"overlap": 0.5}] for _ in range(25)]
    with pytest.raises(LocalevalError, match="no sentence is labelled required"):
        fit_relevance(LabelledRows(questions=one_class, required=[set() for _ in range(25)]), DEFAULT_CALIBRATION)
    with pytest.raises(LocalevalError, match="cannot be fitted"):
        fit_logistic([], [], [], ["a"])


def test_a_utf16_file_is_named_as_such_on_every_line(tmp_path):
    data = tmp_path / "u16.jsonl"
    data.write_bytes((ROOT / "examples" / "rag_samples.jsonl").read_text(encoding="utf-8").encode("utf-16"))
    result = CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "-q"])
    assert result.exit_code == 2
    assert result.output.count("the file is UTF-16, not UTF-8") == 4


def test_a_server_serving_a_catalog_judge_gets_its_calibration_with_or_without_model(monkeypatch):
    import http.server
    import threading

    from localeval.judge import load_judge, openai_server
    from localeval.models import CATALOG

    monkeypatch.setattr(openai_server, "BACKOFF_SECONDS", 0.0)
    models = json.dumps({"data": [{"id": "qwen2.5-coder-1.5b"}]}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body, code = (models, 200) if self.path == "/v1/models" else (b"{}", 404)
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        named = load_judge("qwen2.5-coder-1.5b", judge_url=url)
        unnamed = load_judge(None, judge_url=url)
        assert unnamed.calibration == named.calibration == dict(CATALOG["qwen2.5-coder-1.5b"].calibration)
        assert unnamed.describe()["model"] == "qwen2.5-coder-1.5b"
    finally:
        server.shutdown()


def test_a_run_of_the_id_metric_never_imports_numpy(tmp_path):
    import subprocess
    import sys

    data = tmp_path / "d.jsonl"
    data.write_text('{"retrieved_context_ids": [1], "reference_context_ids": [1]}\n')
    code = (
        "import sys\nfrom localeval.cli import cli\ntry:\n"
        f"    cli.main(['score', {str(data)!r}, '-m', 'id_context_recall', '-q'], standalone_mode=False)\n"
        "finally:\n    print('numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_a_bad_table_in_a_calibration_file_names_the_file(tmp_path):
    from localeval.calibration import CALIBRATION_FORMAT, CALIBRATION_VERSION, checked_calibration
    from localeval.metrics import create_metric

    path = tmp_path / "cal.json"
    path.write_text(json.dumps({"format": CALIBRATION_FORMAT, "version": CALIBRATION_VERSION, "tables": {"attribution": {"intercept": 0, "weights": {"judge": 1}}}}))
    with pytest.raises(ConfigError, match=f"{path}: calibration 'attribution': no weight for"):
        checked_calibration(str(path), [create_metric("context_recall")], ["attribution", "relevance"])


def test_a_required_sentence_that_is_not_in_the_contexts_leaves_its_row_out_by_name(tmp_path):
    from localeval.calibrating import collect
    from localeval.testing import ScriptedJudge

    labels = tmp_path / "labels.jsonl"
    contexts = ["Alpha is here. Beta is there."]
    labels.write_text(json.dumps({"user_input": "q", "retrieved_contexts": contexts, "required": ["Gamma is nowhere."]}) + "\n"
                      + json.dumps({"user_input": "q", "retrieved_contexts": contexts, "required": ["Alpha is here."]}) + "\n")
    rows = collect(str(labels), ScriptedJudge(lambda messages: 0.9))
    assert len(rows.questions) == 1 and rows.required == [{0}]
    assert rows.errors == [f"{labels}:1: field 'required': 'Gamma is nowhere.' is not a sentence of the retrieved contexts; the row is left out"]


def test_a_labels_line_with_a_lone_surrogate_is_refused_by_line(tmp_path):
    from localeval.errors import InputError
    from localeval.labels import read_labels

    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"retrieved_contexts": ["ok"], "statement": "fine", "label": 1}\n{"retrieved_contexts": ["\\ud800"], "statement": "x", "label": 1}\n')
    with pytest.raises(InputError, match=":2:"):
        read_labels(str(labels))


def test_closed_standard_streams_give_one_line_or_a_normal_run(tmp_path):
    import subprocess
    import sys

    data = str(ROOT / "examples" / "rag_samples.jsonl")
    out = tmp_path / "o.jsonl"
    base = [sys.executable, "-m", "localeval", "score", data, "-m", "id_context_recall"]
    no_stderr = subprocess.run([*base, "-o", str(out)], stderr=subprocess.DEVNULL, stdout=subprocess.PIPE, cwd=tmp_path, pass_fds=(), close_fds=True,
                               preexec_fn=lambda: __import__("os").close(2))
    assert no_stderr.returncode == 0 and len(out.read_text().splitlines()) == 5
    no_stdout = subprocess.run([*base, "-o", "-"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                               preexec_fn=lambda: __import__("os").close(1))
    assert no_stdout.returncode == 2 and "standard output is closed" in no_stdout.stderr
