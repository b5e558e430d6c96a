"""Which window of a long document a training statement is paired with.

The verifier reads a statement against windows of consecutive context sentences that fit its
input (localeval.graders.verifier.sentence_windows, the runtime's own cut), so a training row's
evidence is one such window, never a whole article: a row against text the verifier never reads
at once would teach it a shape it does not see. News summaries (prepare_split_data.py) and claims
against long documents (claim_documents.py) both pair a statement with the window that shares
most of its words; a source that annotates its evidence sentences narrows the choice to the
windows holding all of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from localeval.graders.verifier import sentence_windows  # the runtime's own windows


def words(text: str) -> set[str]:
    """Lower-cased alphanumeric words: what "shares words" counts."""
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def window_ranges(statement: str, sentences: list[str], lengths: list[int], budget: int, tokenizer: Any) -> list[range]:
    """The windows the runtime cuts `sentences` into beside `statement` (`lengths`: each
    sentence's tokens and one for the joining space; `budget`: the verifier's attribution input)."""
    return sentence_windows(sentences, lengths, budget - len(tokenizer.encode(statement)) - 3)


def most_shared(statement: str, sentences: list[str], windows: Iterable[range]) -> str:
    """The text of the window holding most of the statement's words (the first one on a tie)."""
    wanted = words(statement)
    best = max(windows, key=lambda w: (len(wanted & words(" ".join(sentences[i] for i in w))), -w.start))
    return " ".join(sentences[i] for i in best)


def best_window(statement: str, sentences: list[str], lengths: list[int], budget: int, tokenizer: Any) -> str:
    """The window of the article (as the runtime cuts them: recall.py) holding most of the
    statement's words."""
    return most_shared(statement, sentences, window_ranges(statement, sentences, lengths, budget, tokenizer))
