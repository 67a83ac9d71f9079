"""The SGLang engine behind the agent loop (CUDA only; `pip install -e .[gpu]`)."""
