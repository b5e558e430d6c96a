"""`localeval compare BASE CANDIDATE`: did the change make it better? Two results files in, the
samples paired, each shared metric's paired difference with its 95% interval and verdict, what
differs between the runs' setups, the --max-drop gates, and the samples that moved most.

`runs.py` reads a results file whole (its header and rows), `setup.py` tells which header
differences change what a score means, `inputs.py` reads the inputs the headers record (the
question text per pair, the contexts that entered or left), `movers.py` says what changed in a
sample's details, and `compare.py` pairs the rows and computes the figures (`compare`, the
public entry point, and the typed `Comparison` it returns)."""
