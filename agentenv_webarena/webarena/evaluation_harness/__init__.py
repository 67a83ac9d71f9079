"""WebArena's evaluation harness: scoring a finished trajectory against a task config.

`evaluator_router(config, judge=None)` builds the scorer (string_match, url_match, program_html,
multiplied); `LLMJudge` grades fuzzy answers; `func:` helpers live in `helper_functions`.
"""
from agentenv_webarena.webarena.evaluation_harness.evaluators import (
    EvaluationError,
    Evaluator,
    EvaluatorComb,
    HTMLContentEvaluator,
    StringEvaluator,
    URLEvaluator,
    evaluator_router,
    judge_calls,
    word_tokenize,
)
from agentenv_webarena.webarena.evaluation_harness.helper_functions import (
    HELPERS,
    HelperContext,
    HelperError,
    call_helper,
    register_helper,
)
from agentenv_webarena.webarena.evaluation_harness.judge import JudgeError, LLMJudge, NeedsJudge, judge_from_settings

__all__ = [
    "HELPERS",
    "EvaluationError",
    "Evaluator",
    "EvaluatorComb",
    "HTMLContentEvaluator",
    "HelperContext",
    "HelperError",
    "JudgeError",
    "LLMJudge",
    "NeedsJudge",
    "StringEvaluator",
    "URLEvaluator",
    "call_helper",
    "evaluator_router",
    "judge_calls",
    "judge_from_settings",
    "register_helper",
    "word_tokenize",
]
