"""The toy environment of docs/adding_an_environment.md, as its own installable package."""
from setuptools import setup

setup(
    name="toy-env",
    version="0.1.0",
    packages=["toy_env"],
    # Step 5 of the guide: the registry record, found by `agentenv.registry` in every process.
    entry_points={"agentenv.envs": ["toy = toy_env:RECORD"]},
)
