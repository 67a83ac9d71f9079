"""HFEngine: ids/log-probs match a forward pass, greedy is deterministic and batch-independent,
seeded sampling reproduces, stop tokens end a request, update_weights changes the policy."""
import asyncio
import dataclasses

import pytest
import torch
from helpers import mixed_sampling_params

from verl.workers.rollout.base import SamplingParams, get_engine_cls
from verl.workers.rollout.hf_rollout import HFEngine, _sample_rows


@pytest.fixture(scope="module")
def engine(tiny_model_dir):
    eng = get_engine_cls("hf")(tiny_model_dir, {"seed": 3})
    yield eng
    eng.shutdown()


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()


def _gather(engine, reqs):
    async def main():
        return await asyncio.gather(*(engine.generate(p, s) for p, s in reqs))
    return asyncio.run(main())


def _prompts(tokenizer, k):
    return [tokenizer.encode(f"Instruction: [SEP] i need a red mug number {i} " * (1 + i % 3), add_special_tokens=False)
            for i in range(k)]


def test_decode_counters_count_model_calls_not_rows(engine, tokenizer):
    """`decode_steps` grows once per batched model call and `busy_s` with the time spent generating, so the
    agent loop can report the mean batch per step (generated tokens / steps) and the time per step."""
    before = dict(engine.stats)
    outs = _gather(engine, [(p, SamplingParams(max_tokens=10, temperature=1.0, seed=i))
                            for i, p in enumerate(_prompts(tokenizer, 4))])
    assert all(len(o.token_ids) == 10 for o in outs)
    steps = engine.stats["decode_steps"] - before["decode_steps"]
    assert engine.stats["generated_tokens"] - before["generated_tokens"] == 40
    assert 10 <= steps < 20  # 4 rows shared their steps (per row or per request counting gives 40)
    assert engine.stats["busy_s"] > before["busy_s"]


def test_log_probs_match_forward_pass(engine, model, tokenizer):
    prompts = _prompts(tokenizer, 5)
    temps = [1.0, 0.7, 1.3, 0.0, 1.0]
    outs = _gather(engine, [(p, SamplingParams(max_tokens=24, temperature=t, seed=i))
                            for i, (p, t) in enumerate(zip(prompts, temps, strict=True))])
    assert engine.stats["max_batch"] >= 2  # concurrent requests were batched
    for p, t, o in zip(prompts, temps, outs, strict=True):
        assert len(o.token_ids) == len(o.log_probs) == 24 and o.finish_reason == "length"
        with torch.no_grad():
            logits = model(torch.tensor([p + o.token_ids])).logits[0, len(p) - 1:-1].float()
        logp = torch.log_softmax(logits / (t if t > 0 else 1.0), -1)
        ref = logp.gather(1, torch.tensor(o.token_ids)[:, None]).squeeze(1)
        torch.testing.assert_close(torch.tensor(o.log_probs), ref, atol=2e-4, rtol=0)
        if t == 0:
            assert o.token_ids == logits.argmax(-1).tolist()


def test_greedy_is_deterministic_and_batch_independent(engine, tokenizer):
    prompts = _prompts(tokenizer, 4)
    greedy = SamplingParams(max_tokens=16, temperature=0)
    alone = _gather(engine, [(prompts[2], greedy)])[0]
    batched = _gather(engine, [(p, greedy) for p in prompts])
    again = _gather(engine, [(p, greedy) for p in prompts])
    assert batched[2].token_ids == alone.token_ids
    assert [o.token_ids for o in batched] == [o.token_ids for o in again]


def test_seeded_sampling_reproduces(engine, tokenizer):
    p = _prompts(tokenizer, 1)[0]
    a = _gather(engine, [(p, SamplingParams(max_tokens=20, seed=11)), (p, SamplingParams(max_tokens=20, seed=12))])
    b = _gather(engine, [(p, SamplingParams(max_tokens=20, seed=11))])
    assert a[0].token_ids == b[0].token_ids
    assert a[0].token_ids != a[1].token_ids


def test_stop_token_ends_request(engine, tokenizer):
    p = _prompts(tokenizer, 1)[0]
    ref = _gather(engine, [(p, SamplingParams(max_tokens=12, temperature=0))])[0].token_ids
    stop = ref[4]
    first = ref.index(stop)
    out = _gather(engine, [(p, SamplingParams(max_tokens=12, temperature=0, stop_token_ids=(stop,))),
                           (p, SamplingParams(max_tokens=12, temperature=0))])
    assert out[0].finish_reason == "stop" and out[0].token_ids == ref[: first + 1]
    assert out[1].token_ids == ref and out[1].finish_reason == "length"


def test_top_k_top_p_truncation():
    torch.manual_seed(0)
    logits = torch.randn(3, 50)
    u = torch.rand(40, 3)
    top2 = set(torch.topk(logits[0], 2).indices.tolist())
    argmax1 = int(logits[1].argmax())
    for row in u:
        s = _sample_rows(logits, torch.tensor([2, 0, 0]), torch.tensor([1.0, 1e-6, 1.0]), row)
        assert int(s[0]) in top2 and int(s[1]) == argmax1 and 0 <= int(s[2]) < 50


def test_update_weights(tiny_model_dir, tokenizer):
    from transformers import AutoModelForCausalLM

    eng = HFEngine(tiny_model_dir)
    try:
        p = _prompts(tokenizer, 1)[0]
        greedy = SamplingParams(max_tokens=10, temperature=0)
        before = _gather(eng, [(p, greedy)])[0].token_ids
        other = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        torch.manual_seed(123)
        with torch.no_grad():
            for prm in other.parameters():
                prm.add_(torch.randn_like(prm) * 0.5)
        eng.update_weights(other.state_dict().items())
        after = _gather(eng, [(p, greedy)])[0].token_ids
        with torch.no_grad():
            expect = other.generate(torch.tensor([p]), max_new_tokens=10, do_sample=False,
                                    eos_token_id=None, pad_token_id=0)[0, len(p):].tolist()
        assert after == expect and after != before
        with pytest.raises(KeyError, match="not parameters"):
            eng.update_weights([("no.such.weight", torch.zeros(1))])
    finally:
        eng.shutdown()
    eng.shutdown()  # idempotent


def test_prefix_kv_reuse_matches_fresh_prefill(tiny_model_dir, tokenizer):
    cached, fresh = HFEngine(tiny_model_dir), HFEngine(tiny_model_dir, prefix_cache_tokens=0)
    try:
        prompts = _prompts(tokenizer, 3)
        first = _gather(cached, [(p, SamplingParams(max_tokens=8, seed=i)) for i, p in enumerate(prompts)])
        obs = tokenizer.encode("\n<|im_start|>user\npage 2<|im_end|>\n<|im_start|>assistant\n",
                               add_special_tokens=False)
        # next turns (different lengths per row) plus one unrelated prompt in the same batch
        nxt = [p + o.token_ids + obs * (1 + i) for i, (p, o) in enumerate(zip(prompts, first, strict=True))]
        nxt += [prompts[0][:5]]
        reqs = [(p, SamplingParams(max_tokens=10, temperature=0.9, seed=100 + i)) for i, p in enumerate(nxt)]
        a = _gather(cached, reqs)
        b = _gather(fresh, reqs)
        assert cached.stats["reused_tokens"] == sum(len(p) + 7 for p in prompts)
        assert fresh.stats["reused_tokens"] == 0
        for x, y in zip(a, b, strict=True):
            assert x.token_ids == y.token_ids
            torch.testing.assert_close(torch.tensor(x.log_probs), torch.tensor(y.log_probs), atol=2e-4, rtol=0)
        # a different trajectory sharing only the first 20 tokens reuses exactly those
        before = cached.stats["reused_tokens"]
        q = nxt[1][:20] + [(nxt[1][20] + 1) % 2000, 9, 10]
        x = _gather(cached, [(q, SamplingParams(max_tokens=6, seed=5))])[0]
        y = _gather(fresh, [(q, SamplingParams(max_tokens=6, seed=5))])[0]
        assert cached.stats["reused_tokens"] - before == 20 and x.token_ids == y.token_ids
        cached.update_weights(list(cached.model.state_dict().items())[:1])
        assert len(cached._prefix.entries) == 0  # new weights invalidate cached KV
    finally:
        cached.shutdown()
        fresh.shutdown()


def test_requests_join_a_running_batch(tiny_model_dir, tokenizer):
    eng, fresh = HFEngine(tiny_model_dir, prefix_cache_tokens=0), HFEngine(tiny_model_dir, prefix_cache_tokens=0)
    prompts = _prompts(tokenizer, 4)
    reqs = [(prompts[0], SamplingParams(max_tokens=300, seed=1)), (prompts[1], SamplingParams(max_tokens=3, seed=2)),
            (prompts[2][:7], SamplingParams(max_tokens=5, temperature=0)),
            (prompts[3], SamplingParams(max_tokens=9, seed=4))]

    async def staggered():
        first = asyncio.ensure_future(eng.generate(*reqs[0]))
        while eng.stats["batches"] == 0:
            await asyncio.sleep(0.001)
        rest = await asyncio.gather(*(eng.generate(*r) for r in reqs[1:]))  # arrive while the long one runs
        return [await first] + rest

    try:
        got = asyncio.run(staggered())
        want = [_gather(fresh, [r])[0] for r in reqs]  # each alone
        assert eng.stats["joined"] >= 1 and eng.stats["batches"] == 1
        for g, w in zip(got, want, strict=True):
            assert g.token_ids == w.token_ids and g.finish_reason == w.finish_reason
            torch.testing.assert_close(torch.tensor(g.log_probs), torch.tensor(w.log_probs), atol=2e-4, rtol=0)
    finally:
        eng.shutdown()
        fresh.shutdown()


@pytest.mark.parametrize("lookahead", [False, True])
def test_row_results_do_not_depend_on_batch_or_lookahead(tiny_model_dir, tokenizer, lookahead):
    """Mixed sampling settings (greedy, seeded T/top-k/top-p, a stop token) in one batch give each request
    what it gets alone; queueing the next decode step before reading the current one (what the engine
    does on CUDA) changes nothing, prefix reuse included."""
    eng, alone = HFEngine(tiny_model_dir), HFEngine(tiny_model_dir, prefix_cache_tokens=0)
    eng._lookahead = lookahead
    prompts = _prompts(tokenizer, 6)
    sps = mixed_sampling_params()
    try:
        first = _gather(eng, list(zip(prompts, sps, strict=True)))
        assert first[4].finish_reason == "stop"  # a stop token ends a sampled row mid-batch
        obs = tokenizer.encode("\n<|im_start|>user\nok<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)
        second = _gather(eng, [(p + o.token_ids + obs, s) for p, o, s in zip(prompts, first, sps, strict=True)])
        # a row holds its prompt and every generated id but the last; with the lookahead that one was fed too
        reused = sum(len(p) + len(o.token_ids) - (not lookahead) for p, o in zip(prompts, first, strict=True))
        assert eng.stats["reused_tokens"] == reused
        reqs = list(zip(prompts, sps, strict=True))
        reqs += [(p + o.token_ids + obs, s) for p, o, s in zip(prompts, first, sps, strict=True)]
        for (p, s), got in zip(reqs, first + second, strict=True):
            want = _gather(alone, [(p, s)])[0]
            assert got.token_ids == want.token_ids and got.finish_reason == want.finish_reason
            torch.testing.assert_close(torch.tensor(got.log_probs), torch.tensor(want.log_probs), atol=2e-4, rtol=0)
    finally:
        eng.shutdown()
        alone.shutdown()


def test_free_cache_engine_true_refused_on_cpu(tiny_model_dir):
    with pytest.raises(ValueError, match=r"free_cache_engine=true cannot be honoured: the HF engine on cpu"):
        HFEngine(tiny_model_dir, {"free_cache_engine": True}, device="cpu")
    assert HFEngine(tiny_model_dir, {}, device="cpu").free_cache is False  # null: off on CPU


@pytest.mark.gpu
def test_sleep_releases_gpu_memory_and_wake_restores_the_policy(tiny_model_dir, tokenizer):
    """Not run on the CPU machines (skipped without CUDA)."""
    eng = HFEngine(tiny_model_dir, {"free_cache_engine": None, "dtype": "float32"}, device="cuda")
    try:
        assert eng.free_cache  # null: on with CUDA
        prompt = _prompts(tokenizer, 1)[0]
        greedy = SamplingParams(max_tokens=12, temperature=0)
        before = _gather(eng, [(prompt, greedy)])[0]
        weights = sum(p.numel() * p.element_size() for p in eng.model.parameters())
        torch.cuda.synchronize()
        used = torch.cuda.memory_allocated()
        eng.sleep()
        assert used - torch.cuda.memory_allocated() >= weights
        with pytest.raises(RuntimeError, match="asleep"):
            _gather(eng, [(prompt, greedy)])
        eng.wake_up(["weights"])
        eng.update_weights((n, p.detach().clone()) for n, p in eng.model.named_parameters())
        eng.wake_up(["kv_cache"])
        after = _gather(eng, [(prompt, greedy)])[0]
        assert after.token_ids == before.token_ids
        torch.testing.assert_close(torch.tensor(after.log_probs), torch.tensor(before.log_probs), atol=1e-6, rtol=0)
    finally:
        eng.shutdown()


def test_a_request_joining_at_every_step_gets_what_it_gets_alone(tiny_model_dir, tokenizer):
    """Requests that arrive one per decode step while others decode join at the next step (one batch, no
    waiting for a quorum), and each gets exactly its tokens and log-probs alone: seeded rows do not depend on
    their batch-mates, on when they joined, or on the rows that left (their KV rows are reused in place)."""
    eng, alone = HFEngine(tiny_model_dir), HFEngine(tiny_model_dir, prefix_cache_tokens=0)
    prompts = _prompts(tokenizer, 8)
    reqs = [(prompts[0], SamplingParams(max_tokens=40, seed=1))]
    reqs += [(prompts[i], SamplingParams(max_tokens=3 + 2 * i, temperature=0.0 if i % 3 == 0 else 0.8, seed=10 + i))
             for i in range(1, 8)]

    async def one_per_step():
        futures = [asyncio.ensure_future(eng.generate(*reqs[0]))]
        for r in reqs[1:]:
            step = eng.stats["decode_steps"]
            while eng.stats["decode_steps"] == step:
                await asyncio.sleep(0.0005)
            futures.append(asyncio.ensure_future(eng.generate(*r)))
        return await asyncio.gather(*futures)

    try:
        got = asyncio.run(one_per_step())
        assert eng.stats["batches"] == 1 and eng.stats["joined"] == 7
        for g, r in zip(got, reqs, strict=True):
            w = _gather(alone, [r])[0]
            assert g.token_ids == w.token_ids and g.finish_reason == w.finish_reason
            torch.testing.assert_close(torch.tensor(g.log_probs), torch.tensor(w.log_probs), atol=2e-4, rtol=0)
    finally:
        eng.shutdown()
        alone.shutdown()


def test_kv_rows_and_width_grow_past_their_first_allocation(tiny_model_dir, tokenizer):
    """More live rows than the first allocation (8) and contexts wider than its 256 columns: the buffers grow
    while rows decode, and every row still gets its tokens alone."""
    eng, alone = HFEngine(tiny_model_dir), HFEngine(tiny_model_dir, prefix_cache_tokens=0)
    prompts = _prompts(tokenizer, 12)
    reqs = [(p * (1 + i % 4), SamplingParams(max_tokens=120 + 20 * (i % 5), temperature=1.0, seed=i))
            for i, p in enumerate(prompts)]
    try:
        got = _gather(eng, reqs)
        assert eng.stats["max_batch"] == 12 and eng._kv.width > 256
        for i in (0, 5, 11):
            w = _gather(alone, [reqs[i]])[0]
            assert got[i].token_ids == w.token_ids
            torch.testing.assert_close(torch.tensor(got[i].log_probs), torch.tensor(w.log_probs), atol=2e-4, rtol=0)
    finally:
        eng.shutdown()
        alone.shutdown()


def test_multi_turn_log_probs_with_reused_prefixes_match_the_actor_forward(tiny_model_dir, model, tokenizer):
    """Turn 2 prefills only the new observation (the KV of turn 1 is reused) and its log-probs are still those
    of a full forward over the whole conversation, as the actor computes them."""
    eng = HFEngine(tiny_model_dir)
    obs = tokenizer.encode("\n<|im_start|>user\nresults page<|im_end|>\n<|im_start|>assistant\n",
                           add_special_tokens=False)
    try:
        prompts = _prompts(tokenizer, 3)
        sps = [SamplingParams(max_tokens=12, temperature=0.7, seed=40 + i) for i in range(3)]
        first = _gather(eng, list(zip(prompts, sps, strict=True)))
        convs = [p + o.token_ids + obs for p, o in zip(prompts, first, strict=True)]
        before = eng.stats["reused_tokens"]
        second = _gather(eng, [(c, SamplingParams(max_tokens=12, temperature=0.7, seed=50 + i))
                               for i, c in enumerate(convs)])
        assert eng.stats["reused_tokens"] - before == sum(len(p) + 11 for p in prompts)
        for c, o in zip(convs, second, strict=True):
            with torch.no_grad():
                logits = model(torch.tensor([c + o.token_ids])).logits[0, len(c) - 1:-1].float()
            ref = torch.log_softmax(logits / 0.7, -1).gather(1, torch.tensor(o.token_ids)[:, None]).squeeze(1)
            torch.testing.assert_close(torch.tensor(o.log_probs), ref, atol=2e-4, rtol=0)
    finally:
        eng.shutdown()


def test_a_stop_rule_ends_the_request_on_the_token_that_completes_the_action(engine, tokenizer):
    """With `SamplingParams.stop_rule` the request ends on the id where the rule fires (kept, finish "stop"),
    and the ids before it are those generated without the rule."""
    from verl.workers.rollout.stop_rules import ActionEndRule

    p = _prompts(tokenizer, 1)[0]
    sp = SamplingParams(max_tokens=30, temperature=1.0, seed=7)
    ref = _gather(engine, [(p, sp)])[0].token_ids
    text = [tokenizer.decode([t], skip_special_tokens=True) for t in ref]
    k = max(i for i in range(1, 30) if text[i].strip() and text[i] not in "".join(text[:i]))
    rule = ActionEndRule(tokenizer, "", text[k])
    out = _gather(engine, [(p, dataclasses.replace(sp, stop_rule=rule.for_request()))])[0]
    assert out.finish_reason == "stop" and out.token_ids == ref[:k + 1]


def test_the_kv_budget_and_prefix_store_come_from_the_rollout_config_and_bound_the_rows(tiny_model_dir, tokenizer):
    """`rollout.kv_cache_space_gb` sets the engine's KV budget and `rollout.prefix_cache_tokens` its prefix store;
    requests beyond the budget wait (fewer live rows), and still get what they get alone."""
    cfg = HFEngine(tiny_model_dir, {"kv_cache_space_gb": 0.5, "prefix_cache_tokens": 77})
    try:
        assert cfg._kv_budget == int(0.5 * 2**30) // cfg.kv_bytes_per_token and cfg._prefix.max_tokens == 77
    finally:
        cfg.shutdown()
    prompts = _prompts(tokenizer, 6)
    reqs = [(p, SamplingParams(max_tokens=20, seed=i)) for i, p in enumerate(prompts)]
    need = [len(p) + 20 for p in prompts]
    tight = HFEngine(tiny_model_dir, kv_budget_tokens=need[0] + need[1] + need[2], prefix_cache_tokens=0)
    alone = HFEngine(tiny_model_dir, prefix_cache_tokens=0)
    try:
        got = _gather(tight, reqs)
        assert tight.stats["max_batch"] == 3  # the budget held three requests' prompts and generations
        for g, r in zip(got, reqs, strict=True):
            assert g.token_ids == _gather(alone, [r])[0].token_ids
    finally:
        tight.shutdown()
        alone.shutdown()


def test_the_engine_thread_leaves_the_cores_to_the_workers_compute(tiny_model_dir, tokenizer):
    """A small model on CPU: the engine thread uses the process's torch threads while nothing else computes and
    `num_threads` (1) while the worker holds `sharing_cores` (a log-prob pass or an update beside a rollout); the
    greedy tokens are the same either way. An explicit num_threads is kept in both."""
    old = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        eng = HFEngine(tiny_model_dir, {"seed": 0})
        pinned = HFEngine(tiny_model_dir, {"seed": 0}, num_threads=3)
    finally:
        torch.set_num_threads(old)
    assert (eng.num_threads, eng.solo_threads) == (1, 2) and (pinned.num_threads, pinned.solo_threads) == (3, 3)
    try:
        reqs = [(p, SamplingParams(max_tokens=8, temperature=0.0)) for p in _prompts(tokenizer, 3)]
        alone = _gather(eng, reqs)
        assert eng._threads_set == 2
        with eng.sharing_cores():
            shared = _gather(eng, reqs)
            assert eng._threads_set == 1
        again = _gather(eng, reqs)
        assert eng._threads_set == 2
        assert [o.token_ids for o in alone] == [o.token_ids for o in shared] == [o.token_ids for o in again]
    finally:
        eng.shutdown()
        pinned.shutdown()
