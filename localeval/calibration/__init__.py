"""The judge rule's calibrated combination: the logistic model over the judge's log-odds and the
evidence features and its files (`combination`), and fitting it with the statistics reported about
a fit (`fitting`). `localeval calibrate`, which runs the judge rule over a user's labels and then
fits, is `localeval.run.calibrate`: it needs the metrics, which need this package."""
