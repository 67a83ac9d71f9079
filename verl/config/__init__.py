"""The trainer's typed configuration: one dataclass per section and the generic loader (the YAML files it reads
live with the Hydra entry points, in `verl/agent_trainer/config/`).

The lowest layer of `verl`, a leaf package: it imports nothing of verl outside itself and no torch at import
time; every other package imports it downward. `loader` (generic: keys, types, compatibility warnings, entry points)
and `device` (what this machine runs: device, dtype, attention kernel, engine) know no section; the
section modules (`data`, `models`, `rollout`, `reward`, `algorithm`, `trainer`, `interaction`) import
`loader`; `schema` (PPO), `sft_schema` and `generation_schema` assemble the roots.
"""
