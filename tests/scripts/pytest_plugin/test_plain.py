"""No budgets: with --dynrec, pytest's own output must not change."""
import torch


def test_ok():
    f = torch.compile(lambda x: x + 1, backend="eager")
    assert f(torch.ones(2)).sum().item() == 4.0


def test_bad():
    f = torch.compile(lambda x: x * 2, backend="eager")
    assert f(torch.ones(2)).sum().item() == 5.0


def test_error(missing_fixture):
    pass
