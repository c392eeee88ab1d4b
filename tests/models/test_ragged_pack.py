"""A pack without padding (models/ragged_pack.py): members of any shapes and families in
one program, each computing its own function and gradients, with its own random stream,
and none run once it has left."""

import pytest
import torch
from torch import nn

import models
from core.io import IOSpec
from models.ragged_pack import RaggedPack, capture_rng

IO = IOSpec(d_in=16, d_out=16, output="image")
MEMBERS = [
    ("hourglass", {"d_z": 24, "d_h": 4, "L": 2}),
    ("conventional", {"d_z": 8, "d_h": 20, "L": 3}),
    ("han", {"width": 16, "depth": 3, "input_layer": False}),
    ("fcnet", {"width": 10, "depth": 1, "activation": "abs"}),
]


def built(specs=MEMBERS, io=IO):
    out = []
    for seed, (family, config) in enumerate(specs):
        torch.manual_seed(seed)
        out.append(models.get_family(family).build(config, io, seed=seed))
    return out


def test_each_member_computes_its_own_function_and_gradients():
    members, twins = built(), built()
    pack = RaggedPack(members)
    x = torch.randn(len(members), 7, IO.d_in)
    y = pack(x)
    assert y.shape == (len(members), 7, IO.d_out)
    y.square().sum().backward()
    for k, twin in enumerate(twins):
        alone = twin(x[k])
        assert torch.equal(y[k], alone)
        alone.square().sum().backward()
        for p, q in zip(members[k].parameters(), twin.parameters()):
            assert torch.equal(p.grad, q.grad)


def test_a_member_that_has_left_is_not_run():
    members = built()
    calls = [0] * len(members)
    for k, m in enumerate(members):
        m.register_forward_hook(lambda mod, args, out, k=k: calls.__setitem__(k, calls[k] + 1))
    pack = RaggedPack(members)
    pack.set_live([0, 2])
    y = pack(torch.randn(len(members), 5, IO.d_in))
    assert calls == [1, 0, 1, 0]
    assert not y[1].any() and not y[3].any() and y[0].any()
    y.sum().backward()
    assert all(p.grad is None for p in members[1].parameters())


class Noisy(nn.Module):
    """A model that draws from the global generator in its forward (dropout)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = nn.Linear(IO.d_in, IO.d_out)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.linear(x))


def test_each_member_draws_what_it_draws_alone_and_the_caller_nothing():
    def make(seed):
        torch.manual_seed(seed)
        return Noisy(seed)

    x = torch.randn(3, 4, IO.d_in)
    alone = []
    for k, seed in enumerate((3, 4, 5)):
        m = make(seed)  # alone: manual_seed, build, then the steps draw on
        alone.append([m(x[k]) for _ in range(2)])
    members, states = [], []
    for seed in (3, 4, 5):
        members.append(make(seed))
        states.append(capture_rng(torch.device("cpu")))
    pack = RaggedPack(members, states)
    torch.manual_seed(99)
    before = torch.get_rng_state()
    steps = [pack(x) for _ in range(2)]
    assert torch.equal(torch.get_rng_state(), before)  # the caller's stream is untouched
    for k in range(3):
        for step in range(2):
            assert torch.equal(steps[step][k], alone[k][step])


def test_regularization_is_each_members_own_or_none():
    io = IOSpec(d_in=16, d_out=10, output="logits")
    members = built([("fcnet", {"width": 8, "depth": 2, "orth_reg": 0.1}), ("fcnet", {"width": 12, "depth": 1})], io)
    pack = RaggedPack(members)
    terms = pack.member_regularization()
    assert terms.shape == (2,)
    torch.testing.assert_close(terms[0], members[0].regularization())
    torch.testing.assert_close(terms[1], members[1].regularization())
    assert RaggedPack(built()[:2]).member_regularization() is None


def test_write_members_leaves_the_members_as_trained():
    members = built()
    pack = RaggedPack(members)
    state = [{k: v.clone() for k, v in m.state_dict().items()} for m in members]
    pack.write_members()
    for m, s in zip(members, state):
        assert all(torch.equal(v, s[k]) for k, v in m.state_dict().items())


def test_an_empty_pack_is_refused():
    with pytest.raises(ValueError):
        RaggedPack([])
