"""What the tests share: generators of hostile input and streams, simulated runners, the simulated rollout."""
