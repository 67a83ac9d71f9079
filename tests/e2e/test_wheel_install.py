"""End to end: the project as a wheel. The tracked files are built into a wheel (`pip wheel --no-deps`), installed
with `--no-deps` into a fresh venv that borrows the test interpreter's installed dependencies (a `.pth` naming its
site-packages: plain paths, so the editable install's finder there never runs), and run from a folder outside the
checkout with no PYTHONPATH: the WebShop server and every embedded WebArena site start and answer, and the main job
(`scripts/webshop_train.sh`'s CPU profile with the shipped SFT policy, shortened) trains one GRPO step on the shipped
item-id files, all read from the installed package."""
from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import time

import pytest
import requests

from agentenv.server import stop_process
from tests.helpers import free_port, wait_until_healthy

pytestmark = [pytest.mark.timeout(400)]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("agentenv", "agentenv_webshop", "agentenv_webarena", "verl")


def _checked(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert proc.returncode == 0, f"{cmd[:4]} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return proc


def _copy_tracked_tree(dest) -> None:
    """The checkout's tracked files (what a fresh clone holds) into `dest`; the whole tree less build outputs and
    virtualenvs where there is no git."""
    if shutil.which("git") and os.path.exists(os.path.join(ROOT, ".git")):
        files = _checked(["git", "ls-files", "-z"], cwd=ROOT).stdout.split("\0")
        for rel in filter(None, files):
            src = os.path.join(ROOT, rel)
            if os.path.isfile(src):
                os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
                shutil.copy2(src, os.path.join(dest, rel))
    else:
        shutil.copytree(ROOT, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".venv*", "build", "dist", "*.egg-info", "__pycache__", "saves", "outputs", "wandb", ".pytest_cache"))


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory) -> str:
    """The python of a fresh venv holding the installed wheel (and nothing of the checkout)."""
    work = tmp_path_factory.mktemp("wheel")
    src, dist, venv = work / "src", work / "dist", work / "venv"
    _copy_tracked_tree(src)
    _checked([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist),
              str(src)], timeout=300)
    (wheel,) = dist.glob("webagent_rl-*.whl")
    _checked([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = str(venv / "bin" / "python")
    purelib = _checked([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    # --target: into the venv only, whatever the running environment already holds (the editable install)
    _checked([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", purelib,
              str(wheel)], timeout=300)
    deps = [p for p in site.getsitepackages() if os.path.isdir(p)]
    with open(os.path.join(purelib, "_borrowed_dependencies.pth"), "w") as fh:
        fh.write("\n".join(deps) + "\n")
    return python


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> str:
    """A working directory outside the checkout."""
    return str(tmp_path_factory.mktemp("outside"))


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MODEL_PATH")}
    return {**env, "HF_HUB_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0", "TOKENIZERS_PARALLELISM": "false",
            "HYDRA_FULL_ERROR": "1"}


@pytest.fixture(scope="module")
def webshop_server(venv_python, outside) -> str:
    """`python -m agentenv_webshop.launch` of the installed package; its base URL."""
    port = free_port()
    proc = subprocess.Popen([venv_python, "-m", "agentenv_webshop.launch", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=outside, env=_env())
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base + "/", timeout_s=120, proc=proc)
        yield base
    finally:
        stop_process(proc, timeout_s=15)


def test_installed_packages_come_from_the_venv_with_their_data(venv_python, outside):
    code = ("import json, agentenv, agentenv_webshop, agentenv_webarena, verl\n"
            "from agentenv.item_ids import PACKAGES_ROOT, resolve_data_path\n"
            "print(json.dumps({'files': [m.__file__ for m in (agentenv, agentenv_webshop, agentenv_webarena, verl)],"
            " 'root': PACKAGES_ROOT, 'policy': agentenv_webshop.SFT_POLICY_DIR,"
            " 'test_ids': resolve_data_path('AgentItemId/webshop_test.json')}))")
    out = json.loads(_checked([venv_python, "-c", code], cwd=outside, env=_env()).stdout)
    root = out["root"]
    assert not root.startswith(ROOT) and os.path.basename(root) == "site-packages"
    assert all(f.startswith(root) for f in out["files"]), out["files"]
    assert os.path.isfile(os.path.join(out["policy"], "model.safetensors")) and out["policy"].startswith(root)
    assert out["test_ids"] == os.path.join(root, "AgentItemId", "webshop_test.json")


def test_installed_webshop_server_answers(webshop_server):
    created = requests.post(webshop_server + "/create", timeout=60)
    assert created.status_code == 200, created.text
    env_idx = created.json()
    env_idx = env_idx["env_idx"] if isinstance(env_idx, dict) else env_idx
    reset = requests.post(webshop_server + "/reset", json={"env_idx": env_idx, "session_id": 0}, timeout=60)
    assert reset.status_code == 200, reset.text
    assert "Instruction" in reset.json()[0]  # a goal of the shipped catalog


def test_installed_embedded_sites_start_and_answer(venv_python, outside):
    urls_file = os.path.join(outside, "urls.json")
    proc = subprocess.Popen([venv_python, "-m", "agentenv_webarena.sites", "--urls-file", urls_file], cwd=outside,
                            env=_env(), stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not os.path.exists(urls_file):
            assert proc.poll() is None, f"python -m agentenv_webarena.sites exited with {proc.returncode}"
            assert time.monotonic() < deadline, "the embedded sites did not start in 120 s"
            time.sleep(0.2)
        urls = json.loads(open(urls_file).read())
        assert set(urls) == {"shopping", "shopping_admin", "reddit", "gitlab", "map", "wikipedia", "homepage"}
        for site_name, url in urls.items():
            page = requests.get(url, timeout=60)
            assert page.status_code == 200, (site_name, url, page.status_code, page.text[:300])
            assert "<html" in page.text.lower(), (site_name, page.text[:300])
    finally:
        stop_process(proc, timeout_s=15)


def _profile_overrides(env: dict) -> list[str]:
    """The main job's CPU-profile overrides with the shipped policy, read as the script reads them
    (scripts/lib/job.sh `read_overrides`, `$VARS` from `env`)."""
    files = [os.path.join(ROOT, "scripts", "profiles", f"webshop_train{s}.args") for s in ("", "_cpu", "_cpu_policy")]
    script = 'source scripts/lib/job.sh; OVERRIDES=(); read_overrides "$@"; printf "%s\\0" "${OVERRIDES[@]}"'
    out = _checked(["bash", "-c", script, "read_overrides", *files], cwd=ROOT, env=env).stdout
    return [line for line in out.split("\0") if line]


def test_installed_main_job_trains_one_step_on_shipped_policy_and_data(venv_python, outside, webshop_server):
    policy = _checked([venv_python, "-c", "import agentenv_webshop; print(agentenv_webshop.SFT_POLICY_DIR)"],
                      cwd=outside, env=_env()).stdout.strip()
    run = os.path.join(outside, "run")
    env = {**_env(), "ENV_ADDR": webshop_server, "MODEL_PATH": policy, "EXPERIMENT": "wheel"}
    overrides = _profile_overrides(env)
    assert "data.train_file=AgentItemId/webshop_train_learnable32_max50.json" in overrides  # relative: shipped
    # the main job, shortened as tests/e2e/test_train_webshop_report.py shortens it
    small = ["trainer.total_training_steps=1", "data.train_batch_size=2", "actor_rollout_ref.rollout.n=2",
             "actor_rollout_ref.actor.ppo_mini_batch_size=2", "actor_rollout_ref.agentgym.max_rounds=2",
             "algorithm.rounds_ctrl.rounds=2", "data.val_max_items=2", "trainer.learning_report=False",
             f"trainer.default_local_dir={run}", f"actor_rollout_ref.rollout.rollout_log_dir={run}/rollouts",
             "ray_init.object_store_memory=200000000"]
    proc = subprocess.run([venv_python, "-m", "verl.agent_trainer.main_ppo", *overrides, *small], cwd=outside,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"main_ppo failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    log = proc.stdout + proc.stderr
    assert "using the shipped" in log and "webshop_train_learnable32_max50.json" in log
    rows = [json.loads(line) for line in open(os.path.join(run, "logs", "metrics.jsonl"))]
    assert [r["step"] for r in rows if "actor/pg_loss" in r] == [1]
