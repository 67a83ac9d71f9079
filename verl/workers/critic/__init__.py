"""PPO critic (value model) workers' compute core."""
