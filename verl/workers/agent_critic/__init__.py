"""PPO critic compute core: the critic interface (`base`) and the data-parallel value model (`dp_critic`)."""
