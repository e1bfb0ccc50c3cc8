"""Stream → evidence: the line scanner, format sniffing, the recorder over an adapter,
codereview-cli runs, and evidence as spans."""
