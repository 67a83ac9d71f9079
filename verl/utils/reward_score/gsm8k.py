"""Rule-based score for GSM8K-style answers ("... #### 42").

Owns answer extraction (strict: the text after the last "####"; flexible: the last number in the
text) and the comparison with the ground truth. Does not own dispatch by data source (see
`verl.utils.reward_score.default_compute_score`).
"""
from __future__ import annotations

import re

__all__ = ["extract_solution", "compute_score"]

# Only the tail of a long response is searched: the final answer sits at the end, and scanning a
# runaway generation with a regex is wasted time.
_TAIL_CHARS = 400
_NUMBER = r"-?[\d][\d,]*(?:\.\d+)?|-?\.\d+"
_STRICT_RE = re.compile(r"####\s*\$?\s*(" + _NUMBER + ")")
_FLEX_RE = re.compile(_NUMBER)


def _normalise_number(text: str) -> str:
    """Drop thousands separators, a leading '+', trailing dots and zeros after a decimal point."""
    text = text.replace(",", "").replace("$", "").strip().lstrip("+").rstrip(".")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("-0", ""):
        text = "0" if text == "-0" else text
    return text


def extract_solution(solution_str: str, method: str = "strict") -> str | None:
    """Return the final numeric answer in `solution_str`, or None when there is none.

    Args:
        solution_str: the decoded model response.
        method: "strict" takes the number after the last "####"; "flexible" takes the last
            number anywhere in the text.

    Raises:
        ValueError: for an unknown method.
    """
    if method not in ("strict", "flexible"):
        raise ValueError(f"gsm8k extraction method={method!r} is unknown; choose 'strict' or 'flexible'")
    tail = solution_str[-_TAIL_CHARS:]
    pattern = _STRICT_RE if method == "strict" else _FLEX_RE
    matches = pattern.findall(tail)
    if not matches:
        return None
    answer = _normalise_number(matches[-1])
    return answer or None


def compute_score(
    solution_str: str,
    ground_truth: str,
    method: str = "strict",
    format_score: float = 0.0,
    score: float = 1.0,
) -> float:
    """Score a GSM8K response: `score` if the extracted answer equals the ground truth,
    `format_score` if an answer was found but is wrong, 0 if none was found."""
    answer = extract_solution(solution_str, method=method)
    if answer is None:
        return 0.0
    truth = str(ground_truth)
    if "####" in truth:  # a full reference solution was passed instead of the bare number
        truth = truth.split("####")[-1]
    return score if answer == _normalise_number(truth) else format_score
