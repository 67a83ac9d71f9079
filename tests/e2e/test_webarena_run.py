"""End to end: `python -m agentenv_webarena.run` on the embedded sites with real Chromium.

TeacherForcingAgent scores 1.0 in-process (and its HTML report renders in Chromium, a section per
step); PromptAgent talks to a scripted OpenAI-compatible server on loopback through the `openai`
client (chat and completion), against an env server started with `python -m agentenv_webarena.launch`
(`--env-addr`): an unparseable reply retried, one that exhausts the retries (the env's hint shows
in the next prompt), and the env's repeated-action early stop; `provider=local` runs a tiny HF
model through the project's HF rollout engine."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from helpers import embedded_sites_env, launched_server, require_chromium, serve_in_thread

require_chromium()
from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks  # noqa: E402
from agentenv_webarena.webarena.browser_env import CHROMIUM_ARGS, default_chromium  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JSONS = os.path.join(ROOT, "agentenv_webarena", "webarena", "agent", "prompts", "jsons")


def _env(**extra) -> dict:
    env = {k: v for k, v in embedded_sites_env().items() if not k.startswith("OPENAI_")}
    env.update(extra)
    return env


def _run_cli(result_dir, *args, env=None, timeout=240) -> dict:
    cmd = [sys.executable, "-m", "agentenv_webarena.run", "--result_dir", str(result_dir), *args]
    proc = subprocess.run(cmd, cwd=ROOT, env=env or _env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with open(os.path.join(result_dir, "results.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def tasks():
    return load_tasks(EMBEDDED_TASK_FILE)


@pytest.fixture(scope="module")
def server():
    with launched_server("agentenv_webarena.launch", env=_env(), timeout_s=120) as (base, _proc):
        yield base


class ScriptedLLM:
    """An OpenAI-compatible /v1/chat/completions and /v1/completions answering from a script per objective."""

    def __init__(self, scripts: dict[str, list[str]]):
        self.scripts = {k: list(v) for k, v in scripts.items()}
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.server, base = serve_in_thread(self.handle)
        self.base_url = base + "/v1"

    def handle(self, request, method):
        body = json.loads(request.rfile.read(int(request.headers["Content-Length"])) or b"{}")
        prompt = body["messages"][-1]["content"] if "messages" in body else body["prompt"]
        objective = prompt.rsplit("OBJECTIVE: ", 1)[1].split("\n", 1)[0]
        with self.lock:
            self.requests.append({"path": request.path, "body": body, "objective": objective})
            script = self.scripts[objective]
            reply = script.pop(0) if len(script) > 1 else script[0]
        now = int(time.time())
        if request.path.endswith("/chat/completions"):
            out = {"id": "c1", "object": "chat.completion", "created": now, "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": reply}}]}
        else:
            out = {"id": "c1", "object": "text_completion", "created": now, "model": body["model"],
                   "choices": [{"index": 0, "text": reply, "finish_reason": "stop", "logprobs": None}]}
        data = json.dumps(out).encode()
        request.send_response(200)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_teacher_forcing_scores_one_and_the_report_renders(tmp_path, tasks):
    out = tmp_path / "tf"
    ids = tmp_path / "ids.json"
    sample = [0, 5, 12]  # shop questions (must_include, exact_match)
    ids.write_text(json.dumps([{"item_id": f"webarena_{i}"} for i in sample]))
    results = _run_cli(out, "--agent_type", "teacher_forcing", "--ids", str(ids), "--test_start_idx", "0",
                       "--test_end_idx", "3", "--num_workers", "2", "--save_screenshots")
    assert results["tasks"] == 3 and results["success"] == 3 and results["success_rate"] == 1.0
    assert results["ci95"][0] < 1.0 <= results["ci95"][1]
    assert sorted(row["task_id"] for row in results["per_task"]) == sample
    assert all(row["score"] == 1.0 and not row["error"] and row["steps"] >= 2 for row in results["per_task"])
    log = (out / "log.txt").read_text()
    assert all(f"task {i}: score 1" in log for i in sample)
    assert len((out / "trajectories.jsonl").read_text().splitlines()) == 3

    row = next(r for r in results["per_task"] if r["task_id"] == 0)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=default_chromium(), args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page()
            page.goto((out / "render_0.html").as_uri())
            steps = page.locator("section.step")
            assert steps.count() == row["steps"]
            for i in range(row["steps"]):
                step = steps.nth(i)
                assert step.locator("h2").inner_text() == f"Step {i + 1}"
                assert step.locator("pre.response").is_visible() and step.locator("pre.action").is_visible()
                assert step.locator("img.screenshot").evaluate("img => img.naturalWidth") == 1280
            assert steps.nth(row["steps"] - 1).locator("pre.action").inner_text() == "stop [$19.95]"
            assert "1 (PASS)" in page.locator("#final").inner_text()
            assert tasks[0]["intent"] in page.title()
        finally:
            browser.close()


def test_prompt_agent_against_a_scripted_openai_server(tmp_path, tasks, server):
    pytest.importorskip("openai", reason="provider=openai needs the openai package (the browser/test extras)")
    answer, stuck = tasks[0]["intent"], tasks[5]["intent"]
    llm = ScriptedLLM({
        answer: ["I am not sure yet.",
                 "The price is shown. In summary, the next action I will perform is ```stop [$19.95]```"],
        stuck: ["no action here", "still no action",
                "Let me look further. In summary, the next action I will perform is ```scroll [down]```"],
    })
    try:
        out = tmp_path / "prompt"
        results = _run_cli(out, "--agent_type", "prompt", "--provider", "openai", "--model", "scripted",
                           "--env-addr", server, "--test_start_idx", "0", "--test_end_idx", "6", "--max_retry", "2",
                           "--ids", str(_ids(tmp_path, [0, 5])), "--num_workers", "2",
                           env=_env(OPENAI_BASE_URL=llm.base_url))
    finally:
        llm.close()
    rows = {row["task_id"]: row for row in results["per_task"]}
    assert rows[0]["score"] == 1.0 and rows[0]["steps"] == 1 and not rows[0]["early_stop"]
    assert rows[5]["score"] == 0.0 and rows[5]["early_stop"].startswith("Same action for 3 times")
    assert rows[5]["steps"] == 4  # the unparseable step, then three identical scrolls
    assert results["success"] == 1 and results["tasks"] == 2

    assert {r["path"] for r in llm.requests} == {"/v1/chat/completions"}
    first = next(r for r in llm.requests if r["objective"] == answer)["body"]
    assert first["model"] == "scripted" and first["temperature"] == 1.0 and first["top_p"] == 0.9
    assert first["max_tokens"] == 384 and first["messages"][0]["role"] == "system"
    stuck_prompts = [r["body"]["messages"][-1]["content"] for r in llm.requests if r["objective"] == stuck]
    assert len(stuck_prompts) == 5  # two tries at step 1, one per scroll
    assert stuck_prompts[0].endswith("PREVIOUS ACTION: None")
    assert "format was incorrect" in stuck_prompts[2].rsplit("PREVIOUS ACTION:", 1)[1]

    traces = {json.loads(line)["task_id"]: json.loads(line)
              for line in (out / "trajectories.jsonl").read_text().splitlines()}
    retried = traces[0]["steps"][0]
    assert retried["attempts"][0] == "I am not sure yet." and retried["action"] == "stop [$19.95]"
    failed = traces[5]["steps"][0]
    assert failed["action"] == "" and failed["parse_error"] and len(failed["attempts"]) == 2
    page = (out / "render_5.html").read_text()
    assert page.count('<section class="step"') == 4 and "Same action for 3 times" in page


def test_prompt_agent_completion_mode_with_screenshots_from_the_server(tmp_path, tasks, server):
    pytest.importorskip("openai", reason="provider=openai needs the openai package (the browser/test extras)")
    intent = tasks[0]["intent"]
    llm = ScriptedLLM({intent: ["stop [$19.95]```"]})  # the template's force_prefix opened the block
    try:
        results = _run_cli(tmp_path / "c", "--agent_type", "prompt", "--model", "scripted", "--mode", "completion",
                           "--instruction_path", os.path.join(JSONS, "p_direct_id_actree_0s_completion.json"),
                           "--env-addr", server, "--test_end_idx", "1", "--save_screenshots",
                           env=_env(OPENAI_BASE_URL=llm.base_url))
    finally:
        llm.close()
    assert results["per_task"][0]["score"] == 1.0
    (request,) = llm.requests
    assert request["path"] == "/v1/completions" and request["body"]["prompt"].endswith("REPLY: ```")
    page = (tmp_path / "c" / "render_0.html").read_text()
    assert page.count('<img class="screenshot"') == 1 and "data:image/png;base64,iVBOR" in page  # via GET /screenshot


def test_local_provider_runs_a_tiny_model_end_to_end(tmp_path, server):
    from verl.utils.tiny_model import build_tiny_model

    model = build_tiny_model(str(tmp_path / "model"))
    out = tmp_path / "local"
    results = _run_cli(out, "--agent_type", "prompt", "--provider", "local", "--model", model,
                       "--env-addr", server, "--test_end_idx", "1", "--max_tokens", "8", "--max_obs_length", "256",
                       "--temperature", "0")
    (row,) = results["per_task"]
    assert row["task_id"] == 0 and not row["error"] and row["steps"] >= 1
    assert row["score"] == 0.0 and results["model"] == model and results["provider"] == "local"
    trace = json.loads((out / "trajectories.jsonl").read_text())
    assert all(step["attempts"] and step["observation"].startswith("Tab 0") for step in trace["steps"])
    assert (out / "render_0.html").read_text().count('<section class="step"') == row["steps"]


def _ids(tmp_path, indices) -> str:
    path = tmp_path / "ids.json"
    path.write_text(json.dumps([{"item_id": f"webarena_{i}"} for i in indices]))
    return str(path)
