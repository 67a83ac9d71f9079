"""verl's module path for the trainer: `python -m verl.trainer.main_ppo` is accepted and runs
`verl.agent_trainer.main_ppo` (same config, same keys)."""
