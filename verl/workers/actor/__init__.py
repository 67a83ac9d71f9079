"""PPO actor compute core (log-probs and policy updates)."""
