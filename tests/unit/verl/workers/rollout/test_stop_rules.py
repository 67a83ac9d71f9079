"""ActionEnd: a turn ends on the token that completes the action's end after its trigger, not before."""
import pytest

from agentenv.envs.webarena import WebarenaEnvClient
from agentenv.envs.webshop import WebshopEnvClient
from verl.workers.rollout.stop_rules import ActionEndRule


def _fires_at(rule, ids):
    matcher = rule.for_request()
    return next((i for i, t in enumerate(ids) if matcher.feed(t)), None)


@pytest.mark.parametrize("text, action_end, expect_end", [
    ("Thought:\nthe [b] option fits.\n\nAction:\nclick[red mug] and more", WebshopEnvClient.action_end,
     "click[red mug]"),
    ("I see the [12] link. In summary, the next action I will perform is ```click [12]``` ok",
     WebarenaEnvClient.action_end, "```click [12]```"),
])
def test_the_rule_fires_on_the_token_that_ends_the_declared_action(tokenizer, text, action_end, expect_end):
    ids = tokenizer.encode(text, add_special_tokens=False)
    at = _fires_at(ActionEndRule(tokenizer, *action_end), ids)
    assert at is not None
    cut = tokenizer.decode(ids[:at + 1])
    # everything up to the action's end is kept; the earlier "]" / "```" (before the trigger) did not stop it
    assert cut.rstrip().endswith(expect_end[-1]) and expect_end in cut and "and more" not in cut and " ok" not in cut
    assert expect_end not in tokenizer.decode(ids[:at])


def test_no_trigger_no_stop(tokenizer):
    ids = tokenizer.encode("Thought: click[a] but no action line yet", add_special_tokens=False)
    assert _fires_at(ActionEndRule(tokenizer, *WebshopEnvClient.action_end), ids) is None


def test_a_trigger_split_across_tokens_still_arms_the_rule(tokenizer):
    rule = ActionEndRule(tokenizer, "Action:", "]")
    ids = [i for ch in "xx Action:\nsearch[mug]" for i in tokenizer.encode(ch, add_special_tokens=False)]
    at = _fires_at(rule, ids)
    assert at == len(ids) - 1
