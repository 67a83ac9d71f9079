"""Echo: a toy environment built from docs/adding_an_environment.md alone.

Item `i` asks the agent to say one word; `say[<word>]` with the right word ends the episode with
reward 1, a wrong word costs a turn, anything else is an invalid action (an observation says so).
"""
from agentenv.registry import EnvRecord

WORDS = ("apple", "river", "stone", "cloud", "paper", "light", "green", "music")

RECORD = EnvRecord(task_name="toy", client="toy_env.client:ToyEnvClient", launch_module="toy_env.launch")
