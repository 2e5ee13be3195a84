"""A test file for dynrec's pytest plugin: passing, failing, over budget."""
import pytest
import torch


def test_passes():
    f = torch.compile(lambda x: x + 1, backend="eager")
    assert f(torch.ones(2)).sum().item() == 4.0


def test_fails():
    f = torch.compile(lambda x: x * 2, backend="eager")
    assert f(torch.ones(2)).sum().item() == 5.0


@pytest.mark.dynrec(max_recompiles=0)
def test_recompiles_over_budget():
    @torch.compile(backend="eager")
    def g(x):
        return x.sin()

    g(torch.ones(3))
    g(torch.ones(3, 4))


@pytest.mark.dynrec(max_recompiles=1)
def test_recompiles_within_budget():
    @torch.compile(backend="eager")
    def h(x):
        return x.cos()

    h(torch.ones(3))
    h(torch.ones(3, 4))


@pytest.mark.dynrec(max_graph_breaks=0)
def test_graph_break_over_budget():
    @torch.compile(backend="eager")
    def k(x):
        y = x + 1
        torch._dynamo.graph_break()
        return y * 2

    k(torch.ones(2))


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    f = torch.compile(lambda x: x - n, backend="eager")
    f(torch.ones(n))
