"""The lab's analyses on a trace (edits, attribution, sweeps, the head atlas, logit lens, precision, checks), and each
page's view data beside them in a module named for the page it feeds (stage_data, overview_data, experiments_data,
compare_data, precision_data, generate_data)."""
