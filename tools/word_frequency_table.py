"""Write localeval/data/word_frequency_en.txt: how common each of the 40,000 most frequent
English words is, from the wordfreq package (a development dependency only).

The evidence features weigh a question's words by how rare they are in the language,
so that a feature means the same with one retrieved context as with ten (a weight
taken from the retrieved contexts themselves is 0 for every word when there is one).
Each line is a word and its Zipf frequency (log10 of occurrences per billion words),
rounded to 0.1. The frequencies are wordfreq's data, CC BY-SA 4.0 (its sources:
Wikipedia, subtitles, news, books, web text, Twitter, Reddit); see the file's header.

    pip install wordfreq==3.1.1 && python tools/word_frequency_table.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

WORDS = 40_000
TARGET = Path(__file__).resolve().parents[1] / "localeval" / "data" / "word_frequency_en.txt"
HEADER = (
    "# Zipf frequencies of the 40,000 most frequent English words, from wordfreq 3.1.1's data\n"
    "# (Robyn Speer, github.com/rspeer/wordfreq; the data is licensed CC BY-SA 4.0 and includes\n"
    "# Wikipedia, OpenSubtitles, news, Google Books, web text, Twitter and Reddit frequencies).\n"
    "# Written by tools/word_frequency_table.py. Format: word<TAB>zipf\n"
)


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    import wordfreq  # a development dependency: only this script needs it

    lines = []
    for word in wordfreq.top_n_list("en", WORDS):
        if "\t" in word or "\n" in word or not word.strip():
            continue
        lines.append(f"{word}\t{wordfreq.zipf_frequency(word, 'en'):.1f}\n")
    TARGET.write_text(HEADER + "".join(lines), encoding="utf-8")
    print(f"{TARGET}: {len(lines)} words")


if __name__ == "__main__":
    main()
