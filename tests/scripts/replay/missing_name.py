"""A program whose module imports a name torch lacks (given here, as a
pytest plugin gives a newer test file's): the replay imports the module's
other names one by one, so its class is defined and its compile replays."""
import torch
import torch.testing._internal.common_utils as common_utils

common_utils.dynrec_test_name_torch_lacks = 1
import missing_name_mod  # noqa: E402

print(torch.compile(missing_name_mod.f, backend="eager")(torch.ones(2), missing_name_mod.Scaled()))
