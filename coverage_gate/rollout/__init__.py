"""Rolling the check out per repository: the Unleash flag, the metrics the rollout is judged
by, receipts and replay, Prometheus, and the readiness report. A new rollout metric goes in
``metrics`` (and the report's counts and the dashboards read it)."""
