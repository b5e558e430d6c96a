"""The runs the commands start: a scoring run's settings (config file and command line), `score`
(samples in, result rows out), `score_file` (a file to a results file, resume, provenance, reports,
the exit code), scoring on a Ray cluster, the progress line, and `localeval calibrate`'s run of the
judge rule over a user's labels (`calibrate`)."""
