"""Aggregates, apart from the per-sample scorers: the summary (running moments in constant memory),
its typed figures, the mean's interval, the human scores a labels file gives scored samples and
PPI++ with them, and the gates' pass/fail rules."""
