"""`localeval generate`: a test set written from the user's own documents, every row checked.

The judge writes each candidate (a question and its reference answer) under a grammar, so no
row is ever malformed; a candidate is kept only when it passes the checks (localeval.generation.checks
and .attribution): its reference is attributed to its contexts by the statement engine, a
two-context reference needs both, the question copies no sentence, stands alone, and is no
near-duplicate of a kept one. The modules: `documents` (a folder or a chunks file read, with
file:line:field errors), `chunking` (sentence-aware chunks with stable ids), `planning` (which
chunks, in which order, spread over the documents), `writing` (the prompts and schema),
`checks` (the checks that need no judge), `attribution` (the ones that do), `runner` (the run:
output, resume, progress, summary).
"""
