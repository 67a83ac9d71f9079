"""PPO actor compute core: the actor interface and update machinery (`base`), the data-parallel actor
(`dp_actor`: log-probs and policy updates)."""
