"""Work made of many runs: a single run (the API's ``simulate``), comparisons of setups, the
paper studies (DPSA, DFRS) and the benchmark."""
