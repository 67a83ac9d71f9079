"""verl: the trainer (PPO/GRPO for multi-turn web agents)."""
