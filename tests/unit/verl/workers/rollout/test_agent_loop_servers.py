"""AgentLoop over several real loopback env servers: rows record their server, per-server metrics
count sessions and failures, and a server killed mid-rollout fails only its own trajectories."""
import numpy as np
from toy_env_server import ToyWebshopServer

from verl.protocol import DataProto
from verl.workers.rollout.agent_loop import AgentLoop


def test_rollout_spreads_rows_and_reports_per_server(tokenizer, scripted_engine_cls):
    servers = [ToyWebshopServer(step_delay_s=0.02) for _ in range(2)]
    servers[1].kill_after_steps = 3
    action = tokenizer.encode("Thought:\nbuy.\n\nAction:\nclick[buy now]", add_special_tokens=False)
    engine = scripted_engine_cls(lambda prompt_ids, sampling: (action + [tokenizer.eos_token_id], "stop"))
    agentgym = {"task_name": "webshop", "env_addr": [s.url for s in servers], "max_rounds": 5, "max_retries": 1,
                "timeout": 3, "health_timeout": 1.0, "server_backoff_s": 30}
    loop = AgentLoop(engine, tokenizer, {"max_tokens": 32, "max_model_len": 8192, "max_concurrency": 4}, agentgym,
                     {"max_prompt_length": 1024, "max_response_length": 512})
    batch = DataProto.from_dict(non_tensors={"item_id": np.array([f"webshop_{i}" for i in range(10)], dtype=object)},
                                meta_info={"max_rounds": 5})
    try:
        out = loop.run(batch)
    finally:
        loop.close()
        for s in servers:
            s.stop()
    rows, errors = list(out.non_tensor_batch["env_server"]), list(out.non_tensor_batch["env_error"])
    failed_on = {r for r, e in zip(rows, errors, strict=True) if e}
    assert failed_on == {servers[1].url}  # only the killed server's trajectories failed
    m = out.meta_info
    assert m["rollout/env_server0/sessions"] + m["rollout/env_server1/sessions"] == 10
    assert m["rollout/env_server0/failures"] == 0 and m["rollout/env_server1/failures"] == sum(map(bool, errors))
    assert m["rollout/env_server1/sessions"] >= 2 and m["rollout/env_server1/up"] == 0.0
    assert m["rollout/env_servers_up"] == 1.0 and m["rollout/env_errors"] == sum(map(bool, errors))
    # failed rows are masked out of the loss; the others were trained on
    mask = out.batch["response_mask"].sum(-1)
    assert all((mask[i] == 0) == bool(errors[i]) for i in range(10))
