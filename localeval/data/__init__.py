"""What localeval reads and writes on disk: samples and their JSON Lines files, the labels file, the
results file's rows, sentence splitting, and writing files safely. It imports no package of
localeval but `errors`, so every other package may build on it."""
