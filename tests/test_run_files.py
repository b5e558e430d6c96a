"""`localeval score RUN --qrels QRELS`: TREC and BEIR run and qrels files read directly, every line
untrusted, the files read recorded in the results header (path and SHA-256)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from conftest import invoke, result_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "retrieval"
RANK = ["-m", "ndcg_at_k", "-m", "reciprocal_rank", "-m", "average_precision", "-m", "precision_at_k", "-m", "recall_at_k", "-m", "hit_rate_at_k", "-m", "r_precision"]


def score(*args: object) -> tuple[int, str]:
    result = invoke(["score", *[str(a) for a in args], "--no-progress"])
    return result.exit_code, result.output


def test_a_trec_run_and_qrels_with_the_files_in_the_header(tmp_path: Path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d3 1 2.0 bm25\nq1 Q0 d1 2 1.0 bm25\nq1 Q0 d2 3 1.0 bm25\nq2 Q0 d9 1 5 bm25\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 0\nq3 0 d4 1\n")
    out = tmp_path / "results.jsonl"
    code, output = score(run, "--qrels", qrels, *RANK, "-o", out, "-q")
    assert code == 0, output
    header = json.loads(out.read_text().splitlines()[0])["run"]["input"]
    assert header["path"] == str(run)
    assert header["read_from"]["run"] == {"path": str(run), "sha256": hashlib.sha256(run.read_bytes()).hexdigest()}
    assert header["read_from"]["qrels"]["sha256"] == hashlib.sha256(qrels.read_bytes()).hexdigest()
    assert "queries" not in header["read_from"]  # none given, none recorded
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "Which document?"}\n')
    with_queries = tmp_path / "with_queries.jsonl"
    code, output = score(run, "--qrels", qrels, "--queries", queries, *RANK, "-o", with_queries, "-q")
    assert code == 0, output
    read_from = json.loads(with_queries.read_text().splitlines()[0])["run"]["input"]["read_from"]
    assert read_from["queries"] == {"path": str(queries), "sha256": hashlib.sha256(queries.read_bytes()).hexdigest()}
    assert read_from["run"] == header["read_from"]["run"] and read_from["qrels"] == header["read_from"]["qrels"]
    rows = {row["id"]: row for row in result_rows(out)}
    # q1: the tie d1/d2 at 1.0 ordered by docid descending (d2 before d1), so d1 is at rank 3
    assert rows["q1"]["details"]["reciprocal_rank"]["ranks"] == {"d1": 3}
    assert rows["q1"]["scores"]["reciprocal_rank"] == pytest.approx(1 / 3)
    assert rows["q2"]["scores"]["ndcg_at_k"] is None  # no judgements: undefined
    assert rows["q2"]["details"]["ndcg_at_k"]["reason"].startswith("no relevant id")
    assert rows["q3"]["scores"]["recall_at_k"] == 0.0  # judged, not in the run: nothing retrieved


def test_the_example_s_beir_files_score_as_pytrec_eval_scores_them(tmp_path: Path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    out = tmp_path / "results.jsonl"
    code, output = score(EXAMPLE / "runs" / "common.json", "--qrels", EXAMPLE / "qrels" / "test.tsv", "--queries", EXAMPLE / "queries.jsonl", *RANK, "-o", out, "-q")
    assert code == 0, output
    rows = result_rows(out)
    assert len(rows) == 30 and rows[0]["id"] == "honey"
    qrels: dict[str, dict[str, int]] = {}
    for line in (EXAMPLE / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query, doc, grade = line.split("\t")
        qrels.setdefault(query, {})[doc] = int(grade)
    run = json.loads((EXAMPLE / "runs" / "common.json").read_text())
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "recip_rank", "map", "P_10", "Rprec"}).evaluate(run)
    for row in rows:
        trec = expected[row["id"]]
        got = row["scores"]
        assert [got["ndcg_at_k"], got["reciprocal_rank"], got["average_precision"], got["precision_at_k"], got["r_precision"]] == pytest.approx(
            [trec["ndcg_cut_10"], trec["recip_rank"], trec["map"], trec["P_10"], trec["Rprec"]], abs=1e-12
        )


def test_a_rerun_writes_the_same_bytes_and_resumes(tmp_path: Path):
    args = [EXAMPLE / "runs" / "idf.trec", "--qrels", EXAMPLE / "qrels" / "test.tsv", "-m", "ndcg_at_k", "--no-timing", "-q"]
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert score(*args, "-o", first)[0] == 0 and score(*args, "-o", second)[0] == 0
    assert first.read_bytes() == second.read_bytes()
    lines = first.read_text().splitlines(keepends=True)
    first.write_text("".join(lines[:11]))  # header and 10 rows: a killed run
    assert score(*args, "-o", first, "--resume")[0] == 0
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("run.txt", "q1 Q0 d1 1 high bm25\n", "run.txt:1: field 'score': expected a number, got 'high'"),
        ("run.txt", "q1 Q0 d1 1 1.0 bm25\nq1 d1 1.0\n", "run.txt:2: expected 'qid Q0 docid rank score tag' (6 columns), got 3"),
        ("run.txt", "q1 Q0 d1 1 nan bm25\n", "run.txt:1: field 'score': expected a finite number"),
        ("run.json", '{"q1": {"d1": "x"}}', "run.json:1: field 'q1.d1': expected a finite number as the score"),
        ("run.json", '{"q1": [1, 2]}', "run.json:1: field 'q1': expected an object"),
        ("run.json", '{"q1": ', "run.json:1: invalid JSON"),
    ],
)
def test_a_bad_run_line_names_the_file_line_and_field(tmp_path: Path, name: str, text: str, where: str):
    run = tmp_path / name
    run.write_text(text)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    code, output = score(run, "--qrels", qrels, "-m", "ndcg_at_k", "-q")
    assert code == 2 and where in output and "Traceback" not in output


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("q1 0 d1 relevant\n", "qrels.txt:1: field 'relevance': expected a number"),
        ("q1 d1\n", "qrels.txt:1: expected 'qid 0 docid relevance'"),
        ("query-id\tcorpus-id\tscore\nq1\td1\tinf\n", "qrels.txt:2: field 'relevance': expected a finite number"),
    ],
)
def test_a_bad_qrels_line_names_the_file_line_and_field(tmp_path: Path, text: str, where: str):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 bm25\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(text)
    code, output = score(run, "--qrels", qrels, "-m", "ndcg_at_k", "-q")
    assert code == 2 and where in output


def test_options_a_run_file_cannot_take_are_refused(tmp_path: Path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 bm25\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    assert "needs --qrels" in score(run, "--queries", qrels, "-m", "ndcg_at_k")[1]
    assert "not a file" in score(run, "--qrels", tmp_path / "missing.txt", "-m", "ndcg_at_k")[1]
    code, output = score(run, "--qrels", qrels, "-m", "ndcg_at_k", "-o", qrels)
    assert code == 2 and "--qrels" in output  # an output over the qrels is refused before it is read


def test_queries_give_the_question_text():
    from localeval.data.trec import read_qrels, read_queries, read_run, retrieval_samples

    samples = list(retrieval_samples(read_run(str(EXAMPLE / "runs" / "idf.trec")), read_qrels(str(EXAMPLE / "qrels" / "test.tsv")), read_queries(str(EXAMPLE / "queries.jsonl"))))
    assert samples[0]["user_input"] == "Why does honey not spoil?"
    assert samples[0]["reference_context_ids"] == ["honey-1", "honey-2"] and samples[0]["reference_context_grades"] == [2.0, 1.0]


def test_compare_names_the_relevant_ids_that_moved(tmp_path: Path):
    import localeval

    results = {}
    for name in ("common.json", "idf.trec"):
        results[name] = tmp_path / f"{name}.results.jsonl"
        code, output = score(EXAMPLE / "runs" / name, "--qrels", EXAMPLE / "qrels" / "test.tsv", "-m", "ndcg_at_k", "-o", results[name], "-q")
        assert code == 0, output
    found = localeval.compare(results["common.json"], results["idf.trec"], show=3).metrics["ndcg_at_k"]
    salt = next(mover for mover in found.improved if mover.id == "salt")
    assert [change.to_json_dict() for change in salt.changes] == [
        {"kind": "relevant_id_moved", "relevant_id": "salt-1", "base_rank": 7, "candidate_rank": 1, "text": "relevant id 'salt-1' moved up: rank 7 in the base, rank 1 in the candidate"}
    ]
    assert any(change.kind == "relevant_id_moved" and "moved down" in change.text for mover in found.worsened for change in mover.changes)
    told = invoke(["compare", str(results["common.json"]), str(results["idf.trec"]), "--show", "0"]).output
    assert "it scored the queries of a run and qrels file" in told and "is not the input it scored" not in told


def test_rank_movers_read_only_the_shape_they_know():
    from localeval.comparison.rank_movers import relevant_id_moves

    good = {"ranks": {"a": 2}, "missing": []}
    assert relevant_id_moves({"ranks": {"a": True}, "missing": []}, good) == []
    assert relevant_id_moves({"ranks": ["a"], "missing": []}, good) == []
    lost = relevant_id_moves(good, {"ranks": {}, "missing": ["a"]})
    assert lost == [("relevant_id_lost", "relevant id 'a' not retrieved in the candidate, at rank 2 in the base", {"relevant_id": "a", "base_rank": 2, "candidate_rank": None})]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet=st.sampled_from(list("q0dQ1 .\t-e{}\":,x\u00e9\n\r")), max_size=40), max_size=8), st.binary(max_size=30))
def test_any_run_or_qrels_file_is_read_or_refused_by_line(tmp_path: Path, lines: list[str], raw: bytes):
    """Whatever the files hold: a ranking, or an InputError naming the file and a line, never another exception."""
    from localeval.data.trec import read_qrels, read_queries, read_run
    from localeval.errors import InputError

    for content in ("\n".join(lines).encode("utf-8"), raw):
        path = tmp_path / "file.txt"
        path.write_bytes(content)
        for reader in (read_run, read_qrels, read_queries):
            try:
                reader(str(path))
            except InputError as error:
                assert error.path == str(path) and error.line >= 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_qrels_file_is_named(tmp_path: Path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 bm25\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    qrels.chmod(0)
    code, output = score(run, "--qrels", qrels, "-m", "ndcg_at_k", "-q")
    assert code == 2 and f"cannot read {qrels}" in output


def test_the_header_records_the_hash_of_the_bytes_read_even_when_the_file_changes_meanwhile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import localeval.run.retrieval_files as retrieval_files

    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 bm25\n")
    scored = hashlib.sha256(run.read_bytes()).hexdigest()
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    real = retrieval_files.read_qrels

    def writer_meanwhile(path: str, digest: object):  # another process appends to the run once localeval has read it
        with open(run, "a", encoding="utf-8") as handle:
            handle.write("q1 Q0 d2 2 1.0 bm25\n")
        return real(path, digest)

    monkeypatch.setattr(retrieval_files, "read_qrels", writer_meanwhile)
    out = tmp_path / "results.jsonl"
    code, output = score(run, "--qrels", qrels, *RANK, "-o", out, "-q")
    assert code == 0, output
    header = json.loads(out.read_text().splitlines()[0])["run"]["input"]
    assert header["read_from"]["run"]["sha256"] == scored != hashlib.sha256(run.read_bytes()).hexdigest()
    assert result_rows(out)[0]["details"]["ndcg_at_k"]["retrieved"] == 1  # the one line read, as the hash says


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
def test_a_run_file_read_in_blocks_of_any_size_gives_every_line_once_with_its_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int):
    import localeval.data.trec as trec

    monkeypatch.setattr(trec, "BLOCK_BYTES", block)
    text = "\ufeffq1 Q0 dé 1 3 t\r\n\n  \nq1 Q0 d€2 2 2.5 t\nq2 Q0 d1 1 1e-3 t\nq1 Q0 d3 9 -1 t"  # BOM, CRLF, blank lines, a query again, no final newline
    run = tmp_path / "run.txt"
    run.write_bytes(text.encode("utf-8"))
    assert trec.read_run(str(run)) == {"q1": ["dé", "d€2", "d3"], "q2": ["d1"]}
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"q1 Q0 d1 1 3 t\nq1 Q0 d\xff2 2 2 t\nq1 Q0 d3 3 x t\n")
    with pytest.raises(trec.InputError, match=r"bad.txt:2: not valid UTF-8 \(byte 7\)"):
        trec.read_run(str(bad))
    bad.write_bytes(b"q1 Q0 d1 1 3 t\n\nq1 Q0 d3 3 x t\n")
    with pytest.raises(trec.InputError, match=r"bad.txt:3: field 'score': expected a number"):
        trec.read_run(str(bad))


def test_a_line_longer_than_a_line_may_be_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import localeval.data.trec as trec

    monkeypatch.setattr(trec, "MAX_LINE_BYTES", 40)
    monkeypatch.setattr(trec, "BLOCK_BYTES", 16)
    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 d1 1 3 t\nq1 Q0 " + b"d" * 60 + b" 2 2 t\n")
    with pytest.raises(trec.InputError, match=r"run.txt:2: line longer than"):
        trec.read_run(str(run))


def test_block_reading_keeps_the_line_readers_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Found by review: a file of 3 bytes or fewer was one line; only one byte order mark was
    dropped, and a bad byte's place on line 1 did not count it; a complete line longer than a line
    may be was read when its newline came in the block that took it past the limit."""
    import localeval.data.trec as trec

    short = tmp_path / "short.txt"
    short.write_bytes(b"a\nb")
    with pytest.raises(trec.InputError, match=r"short.txt:1: expected 'qid Q0 docid rank score tag' \(6 columns\), got 1"):
        trec.read_run(str(short))
    marks = tmp_path / "marks.txt"
    marks.write_bytes("\ufeff\ufeffq1 Q0 d1 1 3 t\n".encode())
    assert trec.read_run(str(marks)) == {"q1": ["d1"]}
    marks.write_bytes(b"\xef\xbb\xbfq1 Q0 d\xff 1 3 t\n")
    with pytest.raises(trec.InputError, match=r"marks.txt:1: not valid UTF-8 \(byte 10\)"):
        trec.read_run(str(marks))
    monkeypatch.setattr(trec, "MAX_LINE_BYTES", 40)
    monkeypatch.setattr(trec, "BLOCK_BYTES", 16)
    long = tmp_path / "long.txt"
    long.write_bytes(b"q1 Q0 d1 1 3 t\n" + b"q1 Q0 " + b"d" * 30 + b" 2 2 t\n")  # line 2: 45 bytes, its newline in the block after the limit
    with pytest.raises(trec.InputError, match=r"long.txt:2: line longer than"):
        trec.read_run(str(long))


def test_a_run_file_in_falling_score_order_and_any_other_give_trec_eval_s_order(tmp_path: Path):
    """A query whose scores fall strictly line after line keeps its file order (not sorted again);
    every other is sorted: both as trec_order ranks them (score descending, then docid descending)."""
    import random

    from localeval.data.trec import read_run, trec_order

    rng = random.Random(3)
    expected, lines = {}, []
    for query in range(200):
        docs = [f"d{rng.randint(0, 30)}" for _ in range(rng.randint(1, 12))]
        falling = rng.random() < 0.5
        scores = sorted(rng.sample(range(1000), len(docs)), reverse=True) if falling else [rng.choice([1.0, 2.0, 2.5, 3.0]) for _ in docs]
        expected[f"q{query}"] = trec_order(list(zip(docs, map(float, scores))))
        lines += [f"q{query} Q0 {doc} {rank} {score} run\n" for rank, (doc, score) in enumerate(zip(docs, scores), start=1)]
    run = tmp_path / "run.trec"
    run.write_text("".join(lines))
    assert read_run(str(run)) == expected
