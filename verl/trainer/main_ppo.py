"""Alias of `verl.agent_trainer.main_ppo` under verl's module path (`python -m verl.trainer.main_ppo`)."""
from verl.agent_trainer.main_ppo import main, run_ppo

__all__ = ["main", "run_ppo"]

if __name__ == "__main__":
    main()
