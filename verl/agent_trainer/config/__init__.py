"""The YAML files the Hydra entry points read (`ppo_trainer.yaml`, `sft_trainer.yaml`, `generation.yaml`; a
recipe adds `pkg://verl.agent_trainer.config` to its search path). Their typed schema is `verl.config`."""
