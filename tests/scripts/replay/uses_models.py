"""replay scenario: the model class lives in a separate user file."""

import torch

import models

model = torch.compile(models.make(), backend="eager")
for n in (2, 3, 3):
    print(n, model(torch.ones(n, 4)).shape)
