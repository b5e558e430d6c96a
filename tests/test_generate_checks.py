"""`localeval generate`'s parts that need no model: reading the documents, chunking, the plan,
and each check a candidate passes (copy, standalone, near-duplicate), and the inputs refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import invoke

from localeval.errors import ConfigError, InputError
from localeval.generation.checks import (
    ANSWER_ABOUT_SOURCE,
    ANSWER_ASKS,
    ANSWER_CUT_OFF,
    NEAR_COPY,
    NEAR_DUPLICATE,
    NOT_A_QUESTION,
    NOT_STANDALONE,
    Duplicates,
    answer_refusal,
    copy_overlap,
    copy_refusal,
    question_refusal,
    standalone_refusal,
    word_overlap,
)
from localeval.generation.chunking import chunk_documents, chunk_text, count_tokens
from localeval.generation.documents import Chunk, Document, html_text, read_chunks, read_folder
from localeval.generation.planning import SINGLE, TWO, candidates, entities, pairs, single_order

TEXT = (
    "Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891 to study physics. "
    "In 1903 she shared the Nobel Prize in Physics with Pierre Curie. She won a second Nobel Prize in 1911."
)


def test_chunks_are_whole_sentences_within_the_size():
    chunks = chunk_text(TEXT, size=20)
    assert len(chunks) > 1
    assert " ".join(chunks) == TEXT
    assert all(count_tokens(chunk) <= 20 for chunk in chunks)
    assert all(chunk.endswith(".") for chunk in chunks)


def test_a_sentence_longer_than_a_chunk_is_cut_between_words():
    long = " ".join(f"word{i}" for i in range(50)) + "."
    chunks = chunk_text(long, size=16)
    assert all(count_tokens(chunk) <= 16 for chunk in chunks)
    assert " ".join(chunks).split() == long.split()


def test_a_heading_joins_the_paragraph_after_it_and_ids_are_path_and_position():
    chunks = chunk_documents([Document("guide/a.md", "Setup\n\n" + TEXT)], size=30)
    assert chunks[0].text.startswith("Setup\nMarie Curie")
    assert [c.id for c in chunks] == [f"guide/a.md#{i}" for i in range(len(chunks))]
    assert chunk_documents([Document("guide/a.md", "Setup\n\n" + TEXT)], size=30) == chunks


def test_html_keeps_the_visible_text_only():
    assert html_text("<html><head><title>t</title><script>x=1</script></head><body><p>One.</p><p>Two &amp; three.</p></body></html>") == "One.\n\nTwo & three."


def test_a_folder_is_read_sorted_and_a_binary_file_is_refused_by_name(tmp_path: Path):
    (tmp_path / "b.txt").write_text("Second document. It has text.", encoding="utf-8")
    (tmp_path / "a.md").write_text("# Title\n\nFirst document.", encoding="utf-8")
    (tmp_path / "notes.pdf").write_bytes(b"%PDF\x00")  # not a suffix read
    assert [d.name for d in read_folder(str(tmp_path))] == ["a.md", "b.txt"]
    (tmp_path / "c.txt").write_bytes(b"\x89PNG\x00\x00binary")
    with pytest.raises(InputError, match="c.txt.*binary"):
        read_folder(str(tmp_path))


def test_an_empty_folder_is_refused(tmp_path: Path):
    with pytest.raises(ConfigError, match="no document"):
        read_folder(str(tmp_path))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "a"}', "chunks.jsonl:2: field 'text': missing"),
        ('{"id": true, "text": "x"}', "chunks.jsonl:2: field 'id'"),
        ('{"id": "a", "text": "   "}', "chunks.jsonl:2: field 'text': must be a non-empty string"),
        ('{"id": "a", "text": "again"}', "chunks.jsonl:2: field 'id': 'a' is also the id of line 1"),
        ("[1, 2]", "chunks.jsonl:2: expected a JSON object"),
        ("{not json", "chunks.jsonl:2: not valid JSON"),
    ],
)
def test_a_bad_chunks_line_names_its_line_and_field(tmp_path: Path, line: str, message: str):
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"id": "a", "text": "Fine."}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_chunks(str(path))
    assert message in str(caught.value)


def test_the_cli_refuses_bad_inputs_with_exit_2_and_no_traceback(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke(["generate", str(empty), "-n", "2", "-o", str(tmp_path / "t.jsonl")])
    assert result.exit_code == 2 and "no document with text" in result.output and "Traceback" not in result.output
    bad = tmp_path / "chunks.jsonl"
    bad.write_text('{"id": 1, "text": "ok"}\n{"id": 2}\n', encoding="utf-8")
    result = invoke(["generate", "--chunks", str(bad), "-n", "2", "-o", str(tmp_path / "t.jsonl")])
    assert result.exit_code == 2 and "chunks.jsonl:2: field 'text': missing" in result.output
    binary = tmp_path / "bin"
    binary.mkdir()
    (binary / "x.txt").write_bytes(b"\x00\x01\x02")
    result = invoke(["generate", str(binary), "-n", "2", "-o", str(tmp_path / "t.jsonl")])
    assert result.exit_code == 2 and "x.txt" in result.output and "binary" in result.output
    result = invoke(["generate", "-n", "2", "-o", str(tmp_path / "t.jsonl")])
    assert result.exit_code == 2 and "give DOCS" in result.output
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Some text.", encoding="utf-8")
    result = invoke(["generate", str(docs), "-n", "2", "-o", str(tmp_path / "no" / "such" / "t.jsonl")])
    assert result.exit_code == 2 and "t.jsonl" in result.output and "Traceback" not in result.output


def _chunks(spec: dict[str, int]) -> list[Chunk]:
    return [Chunk(f"{doc}#{i}", "word " * (10 if doc != "long" else 40), doc) for doc, count in spec.items() for i in range(count)]


def test_the_plan_uses_every_document_first_then_spreads_by_length():
    chunks = _chunks({"long": 8, "short": 2, "tiny": 1})
    order = single_order(chunks, wanted=5, seed=3)
    assert {c.document for c in order[:3]} == {"long", "short", "tiny"}
    assert sorted(c.id for c in order) == sorted(c.id for c in chunks)
    later = [c.document for c in order[3:8]]
    assert later.count("long") >= 4  # 4 x the tokens per chunk, 8 chunks: the long document fills the next places
    assert single_order(chunks, 5, 3) == order and single_order(chunks, 5, 4) != order


def test_pairs_share_a_name_and_two_context_candidates_interleave():
    chunks = [
        Chunk("a#0", "The museum in Lyon opened in 1990. Its director is Anne Moreau.", "a"),
        Chunk("b#0", "In 2001 the city council of Lyon voted a new budget.", "b"),
        Chunk("c#0", "Nothing named here at all.", "c"),
    ]
    assert "Anne Moreau" in entities(chunks[0].text) and "Lyon" in entities(chunks[1].text)
    assert [(a.id, b.id, name) for a, b, name in pairs(chunks, 0)] == [("a#0", "b#0", "Lyon")]
    kinds = [c.kind for c in candidates(chunks, 3, 0, two_context_share=0.25)]
    assert kinds.count(TWO) == 1 and kinds.count(SINGLE) == 3
    assert [c.kind for c in candidates(chunks, 3, 0, two_context_share=0.0)] == [SINGLE] * 3


def test_copy_overlap_refuses_a_copied_sentence_and_keeps_a_paraphrase():
    context = "The boiling point of water at sea level is 100 degrees Celsius."
    copied = copy_overlap("What is the boiling point of water at sea level?", [context])
    paraphrase = copy_overlap("At what temperature does water boil at sea level?", [context])
    assert copied >= 0.6 and copy_refusal(copied) == NEAR_COPY
    assert paraphrase < 0.6 and copy_refusal(paraphrase) is None
    assert word_overlap("At what temperature does water boil?", context) == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("question", "refused"),
    [
        ("When was it founded?", True),
        ("What did they find in the trial?", True),
        ("What does the passage say about Warsaw?", True),
        ("According to the text, who won?", True),
        ("This method improves what?", True),
        ("What is the name of the prison?", True),
        ("How tall is the tower?", True),
        ("Which organ produces insulin?", False),
        ("In what year did Marie Curie win her second Nobel Prize?", False),
        ("Where was the Sorbonne founded and by whom?", False),
        ("What is the capital of France?", False),
    ],
)
def test_a_question_must_stand_alone(question: str, refused: bool):
    assert (standalone_refusal(question) == NOT_STANDALONE) is refused


def test_a_question_is_one_sentence_ending_in_a_question_mark():
    assert question_refusal("Where was Marie Curie born?") is None
    assert question_refusal("Marie Curie was born in Warsaw.") == NOT_A_QUESTION
    assert question_refusal("Marie Curie was born in 1867. The answer is: when was she born?") == NOT_A_QUESTION


def test_a_reference_cut_off_by_the_grammar_or_asking_a_question_is_refused():
    assert answer_refusal("Marie Curie was born in Warsaw.", 240) is None
    assert answer_refusal("x" * 239, 240) == ANSWER_CUT_OFF
    assert answer_refusal("Who played Thelma Lou? Betty Lynn did.", 240) == ANSWER_ASKS
    assert answer_refusal("The passage discusses the effectiveness of HPV testing.", 240) == ANSWER_ABOUT_SOURCE


def test_dates_and_nationalities_are_no_shared_entity():
    assert entities("Born on 17 September 1899, the Canadian actor starred in The Andy Griffith Show.") == {"Andy Griffith Show"}


def test_near_duplicates_by_word_overlap_without_the_embedding_model():
    kept = Duplicates(None)
    assert "word overlap" in kept.measure
    kept.keep("In what year did Marie Curie win her second Nobel Prize?")
    assert kept.refusal("In which year did Marie Curie win the second Nobel Prize?") == NEAR_DUPLICATE
    assert kept.refusal("Where was the Sorbonne founded?") is None


def test_near_duplicates_by_the_embedding_cosine(embedding_model: Path):
    from localeval.models.embedding import load_embedder

    kept = Duplicates(load_embedder())
    assert "embedding cosine" in kept.measure
    kept.keep("In what year did Marie Curie win her second Nobel Prize?")
    assert kept.refusal("When did Marie Curie receive her second Nobel Prize?") == NEAR_DUPLICATE
    assert kept.refusal("Who founded the Sorbonne?") is None


def test_a_kept_question_is_embedded_once(embedding_model: Path):
    """The runner asks `refusal` and then `keep` of each kept question: the vector the check made
    is the one kept (the same as a fresh embedding of it), not a second embedding."""
    from localeval.models.embedding import load_embedder

    embedder = load_embedder()
    asked: list[str] = []

    class Counted:
        def embed(self, texts: list[str]) -> Any:
            asked.extend(texts)
            return embedder.embed(texts)

    kept = Duplicates(Counted())
    for question in ("Who founded the Sorbonne?", "In what year did Marie Curie win her second Nobel Prize?"):
        assert kept.refusal(question) is None
        kept.keep(question)
    kept.keep("Where is the Louvre?")  # a resumed row: kept without a check, embedded then
    assert asked == ["Who founded the Sorbonne?", "In what year did Marie Curie win her second Nobel Prize?", "Where is the Louvre?"]
    assert kept.refusal("When did Marie Curie receive her second Nobel Prize?") == NEAR_DUPLICATE
    assert (kept._vectors[1] == embedder.embed(["In what year did Marie Curie win her second Nobel Prize?"])[0]).all()


def test_the_summary_file_name_sits_beside_the_output():
    from localeval.generation.command import summary_path

    assert summary_path("out/testset.jsonl") == str(Path("out/testset.summary.json"))


def _quality_script():
    import importlib.util
    import sys

    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("generate_quality", folder / "generate_quality.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmarks_bm25_ranks_the_paragraph_that_holds_the_words_first_and_counts_malformed_rows():
    quality = _quality_script()
    corpus = ["Marie Curie was born in Warsaw.", "The Sorbonne is in Paris.", "Warsaw is the capital of Poland."]
    bm25 = quality.BM25(corpus)
    assert bm25.rank("Where was Marie Curie born?", 0) == 1
    assert bm25.rank("Which city is the capital of Poland?", 0) == 3  # a tie at 0 with the Sorbonne counts against it
    good = {"user_input": "Q?", "reference": "A.", "reference_contexts": ["c"], "reference_context_ids": ["c#0"], "metadata": {}}
    assert not quality.malformed(good)
    assert quality.malformed({**good, "reference": ""}) and quality.malformed({**good, "reference_context_ids": ["a", "b"]})
    assert quality.malformed({**good, "user_input": 3})
    row = {**good, "user_input": "Where was Marie Curie born?", "reference_contexts": [corpus[0]], "reference_context_ids": ["curie"], "metadata": {"question_kind": "single_context"}}
    figures = quality.versus_human([row], {"curie": ["In which city was the scientist Curie born?"]}, corpus, ["curie", "sorbonne", "warsaw"])
    assert figures["gen_rank_mean"] == 1 and figures["human_words_mean"] == 8 and figures["gen_overlap_mean"] == 1.0
