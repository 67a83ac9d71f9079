"""The prime reward manager (verl's `reward_manager=prime`): the naive manager with its rule-scored
rows scored in parallel worker processes, each sample under a timeout.

A scorer that hangs (a runaway sympy simplification, a stuck sandbox) is killed after
`reward_model.prime.timeout_s` and one that raises or crashes its process gives 0 for that
sample; both are counted in the step's metrics (`reward/timeouts`, `reward/errors`) and logged,
and the step goes on. On normal input the output equals the naive manager's.
"""
from __future__ import annotations

import logging

from verl.utils.scorer_pool import ScorerPool
from verl.workers.reward_manager.naive import NaiveRewardManager, ScoreJob
from verl.workers.reward_manager.registry import register_reward_manager

__all__ = ["PrimeRewardManager"]

logger = logging.getLogger(__name__)


@register_reward_manager("prime")
class PrimeRewardManager(NaiveRewardManager):
    """Naive manager whose rule scores run in `reward_model.prime.num_processes` worker processes.

    Arguments as `NaiveRewardManager`; `compute_score` must be picklable (the default scorer and
    `custom_reward_function.path` scorers are).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pool: ScorerPool | None = None

    def _score_jobs(self, jobs: list[ScoreJob]) -> tuple[list, dict[str, float]]:
        """Scores of `jobs` from the worker pool: 0.0 for a timeout or a failure (counted)."""
        metrics = {"reward/timeouts": 0.0, "reward/errors": 0.0}
        if not jobs:
            return [], metrics
        if self._pool is None:
            self._pool = ScorerPool(self.compute_score, self.config.prime.num_processes)
        outcomes = self._pool.map([job.args for job in jobs], self.config.prime.timeout_s)
        scores = []
        for job, outcome in zip(jobs, outcomes, strict=True):
            if outcome.status == "ok":
                scores.append(outcome.value)
                continue
            metrics["reward/timeouts" if outcome.status == "timeout" else "reward/errors"] += 1
            logger.warning("row %d (%s) scored 0: %s %s", job.row, job.data_source, outcome.status, outcome.message)
            scores.append(0.0)
        return scores, metrics

    def close(self) -> None:
        """Stop the scorer processes (they restart on the next call)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
