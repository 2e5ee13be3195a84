"""A module holding a registry like transformers' ACT2FN: an OrderedDict
subclass whose __getitem__ makes a new object per lookup (replay scenario
registry_getitem.py)."""

import collections

import torch


class Instantiator(collections.OrderedDict):
    made = 0

    def __getitem__(self, key):
        Instantiator.made += 1
        return super().__getitem__(key)()


class Plus1(torch.nn.Module):
    def forward(self, x):
        return x + 1


ACTS = Instantiator(plus=Plus1, ident=torch.nn.Identity)
