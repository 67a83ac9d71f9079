"""Rollout: the engine interface (`base`), the HF engine (`hf_rollout`), the vLLM engine
(`agent_vllm_rollout/vllm_rollout`), the SGLang engine (`sglang_rollout/sglang_rollout`), single-turn
rows (`naive/naive_rollout`), trajectory types (`schemas`), chat tokenisation shared with SFT
(`tokenizer`) and the one multi-turn agent loop (`agent_loop`)."""
