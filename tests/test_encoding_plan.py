"""The encoding plan: a corpus's batches are cut once, by (token length, doc id), so they do
not depend on how many encoders there are; padding is counted; token lengths come from the
model's tokenizer alone."""

from __future__ import annotations

import numpy as np

from lasagna.models.embedders import token_lengths
from lasagna.retrieval.batching import plan_encoding


def test_batches_are_sorted_by_length_then_id_and_cover_every_row_once() -> None:
    ids = ["d3", "d1", "d2", "d0", "d4"]
    plan = plan_encoding(ids, [7, 3, 7, 3, 1], batch_size=2)
    batches = [[ids[i] for i in b] for b in plan.batches()]
    assert batches == [["d4", "d0"], ["d1", "d2"], ["d3"]]
    assert len(plan) == 3
    assert sorted(np.concatenate(list(plan.batches())).tolist()) == list(range(5))


def test_the_plan_depends_on_the_corpus_alone_not_its_order() -> None:
    rng = np.random.default_rng(0)
    ids = [f"doc{i}" for i in range(50)]
    lengths = rng.integers(1, 30, size=50).tolist()
    plan = plan_encoding(ids, lengths, 8)
    perm = rng.permutation(50)
    shuffled = plan_encoding([ids[i] for i in perm], [lengths[i] for i in perm], 8)
    as_ids = [[ids[i] for i in b] for b in plan.batches()]
    assert as_ids == [[ids[perm[i]] for i in b] for b in shuffled.batches()]


def test_padding_is_counted_against_batches_in_corpus_order() -> None:
    plan = plan_encoding(["a", "b", "c", "d"], [10, 1, 10, 1], batch_size=2)
    pad = plan.padding()
    assert (pad.real, pad.padded, pad.unsorted) == (22, 22, 40)
    assert pad.waste == 0.0 and abs(pad.unsorted_waste - 18 / 40) < 1e-12
    assert "padding 0.0%" in pad.describe()


def test_token_lengths_come_from_the_tokenizer_and_are_truncated() -> None:
    lengths = token_lengths("packaged:all-MiniLM-L6-v2", ["hello world", "a " * 600])
    assert lengths == [4, 256]  # [CLS] hello world [SEP]; MiniLM truncates at 256
    assert token_lengths("packaged:all-MiniLM-L6-v2", ["a " * 600], 32) == [32]


def test_model_inputs_use_the_current_sentence_transformers_call(caplog) -> None:
    """`tokenize` is deprecated in sentence-transformers 5+ and logs so from every embedder
    actor: the inputs come from `preprocess` there, silently."""
    import logging

    from lasagna.models.embedders import load_embedder
    from lasagna.models.runtimes import model_inputs

    model = load_embedder("packaged:all-MiniLM-L6-v2", "cpu", 1)
    with caplog.at_level(logging.WARNING):
        mask = model_inputs(model, ["hello world", "a b c"])["attention_mask"]
    assert mask.sum(dim=1).tolist() == [4, 5]
    assert not [r for r in caplog.records if "deprecated" in r.getMessage()]
