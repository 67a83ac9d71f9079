"""Helpers shared by the test suite: free ports, starting real servers on 127.0.0.1, and small
loopback HTTP servers for client tests."""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterator

from agentenv import health
from agentenv.server import stop_process


def free_port() -> int:
    """Return a TCP port that is free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_healthy(url: str, timeout_s: float = 60.0, proc: subprocess.Popen | None = None) -> None:
    """Poll `url` until it answers 200; fail early if `proc` exits (`agentenv.health`)."""
    health.wait_until_healthy(url, timeout_s=timeout_s, proc=proc, interval_s=0.2, max_interval_s=0.2)


@contextlib.contextmanager
def launched_server(
    module: str, *args: str, timeout_s: float = 120.0, env: dict | None = None
) -> Iterator[tuple[str, subprocess.Popen]]:
    """Start `python -m <module> --host 127.0.0.1 --port <free> *args`; yield (base_url, process)."""
    port = free_port()
    cmd = [sys.executable, "-m", module, "--host", "127.0.0.1", "--port", str(port), *args]
    proc = subprocess.Popen(cmd, env={**os.environ, **(env or {})})
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base + "/", timeout_s=timeout_s, proc=proc)
        yield base, proc
    finally:
        stop_process(proc, timeout_s=15)


def serve_in_thread(handle: Callable[[BaseHTTPRequestHandler, str], None]) -> tuple[ThreadingHTTPServer, str]:
    """A threaded loopback HTTP server sending every GET and POST to `handle(request, method)`;
    returns (server, base URL). Stop it with `server.shutdown(); server.server_close()`."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output quiet
            pass

        def do_GET(self):
            handle(self, "GET")

        def do_POST(self):
            handle(self, "POST")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def build_tiny_reward_model(policy_dir: str, out_dir: str, seed: int = 0) -> str:
    """A seeded Qwen2ForSequenceClassification (num_labels=1) with the tiny policy's config sizes and
    tokenizer, saved to `out_dir` (a reward model for tests; nothing is downloaded)."""
    import torch
    from transformers import AutoConfig, AutoTokenizer, Qwen2ForSequenceClassification

    config = AutoConfig.from_pretrained(policy_dir)
    config.num_labels = 1
    config.architectures = ["Qwen2ForSequenceClassification"]
    tokenizer = AutoTokenizer.from_pretrained(policy_dir)
    config.pad_token_id = tokenizer.pad_token_id
    torch.manual_seed(seed)
    model = Qwen2ForSequenceClassification(config)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def hf_greedy(model, prompt: list[int], n: int, eos=(), device: str = "cpu") -> tuple[list[int], list[float]]:
    """Reference greedy decoding with plain HF forwards: up to `n` token ids after `prompt` and their
    log-probs; stops after a token in `eos` (engines that also stop on the model's EOS ids)."""
    import torch

    ids, lps = list(prompt), []
    with torch.no_grad():
        for _ in range(n):
            logits = model(torch.tensor([ids], device=device)).logits[0, -1].float()
            tok = int(logits.argmax())
            lps.append(float(torch.log_softmax(logits, -1)[tok]))
            ids.append(tok)
            if tok in eos:
                break
    return ids[len(prompt):], lps


def mixed_sampling_params() -> list:
    """Six requests that mix greedy, seeded sampling, top-k, top-p and stop tokens (one per row of a batch)."""
    from verl.workers.rollout.base import SamplingParams

    return [SamplingParams(max_tokens=20, seed=1), SamplingParams(max_tokens=14, temperature=0),
            SamplingParams(max_tokens=18, temperature=0.7, top_k=5, seed=2),
            SamplingParams(max_tokens=20, top_p=0.8, seed=3),
            SamplingParams(max_tokens=25, temperature=1.3, seed=4, stop_token_ids=tuple(range(3, 400))),
            SamplingParams(max_tokens=9, temperature=0.5, top_k=3, top_p=0.9, seed=6)]


def require_chromium() -> str:
    """Skip the calling test module unless Playwright and the browser it drives are installed; returns the
    browser's path (`scripts/install_chromium.sh` installs it, and the README's test command runs that)."""
    import pytest

    pytest.importorskip("playwright")
    from agentenv_webarena.webarena.browser_env import default_chromium

    path = default_chromium()
    if not os.path.exists(path):
        pytest.skip("Chromium is not installed (bash scripts/install_chromium.sh)", allow_module_level=True)
    return path


class ScriptedJudge:
    """An OpenAI-compatible LLM judge on 127.0.0.1 (`POST /v1/chat/completions`, base URL `self.url`).

    `verdict(prompt) -> str` writes the reply (default: "correct" when the student answer holds "on hold",
    "same" when the reported reason holds "not sell", else "incorrect" / "different"). `mode` switches
    to "slow" (1.5 s before answering), "error" (HTTP 500) or "no_verdict". Every request is recorded in
    `requests` as {"path", "body", "auth"}. Stop it with `close()`.
    """

    def __init__(self, verdict: Callable[[str], str] | None = None):
        self.requests: list[dict] = []
        self.mode = "ok"
        self.verdict = verdict or self.default_verdict
        self._lock = threading.Lock()
        self.server, base = serve_in_thread(self._handle)
        self.url = base + "/v1"

    @staticmethod
    def default_verdict(prompt: str) -> str:
        prompt = prompt.lower()
        if "student answer:" in prompt:
            return "correct" if "on hold" in prompt.split("student answer:", 1)[1] else "incorrect"
        return "same" if "not sell" in prompt.split("reported by the agent:", 1)[-1] else "different"

    def _handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        import json
        import time

        body = json.loads(request.rfile.read(int(request.headers.get("Content-Length") or 0)) or b"{}")
        with self._lock:
            self.requests.append({"path": request.path, "body": body, "auth": request.headers.get("Authorization")})
        text = f"Verdict: {self.verdict(body['messages'][-1]['content'])}"
        status = 200
        if self.mode == "slow":
            time.sleep(1.5)
        elif self.mode == "error":
            status, text = 500, ""
        elif self.mode == "no_verdict":
            text = "I cannot tell."
        reply = {"choices": [{"message": {"role": "assistant", "content": text}}]} if status == 200 else {"error": "x"}
        data = json.dumps(reply).encode()
        try:
            request.send_response(status)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (the timeout case)
            pass

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def read_jsonl(path) -> list[dict]:
    """The JSON objects of a .jsonl file, one per non-empty line."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def embedded_sites_env() -> dict[str, str]:
    """This process's environment without WebArena's site variables (SHOPPING, REDDIT, ...), so a launched
    WebArena server serves its embedded sites even where a real deployment is configured."""
    from agentenv_webarena.tasks.config import SITE_ENV_VARS

    return {k: v for k, v in os.environ.items() if k not in SITE_ENV_VARS.values()}
