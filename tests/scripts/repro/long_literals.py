"""repro scenario: values whose code is longer than a line -- a string that
holds ", " (the repro's line wrapper must never break inside it), a tuple
of such strings and a dict -- read by a compiled function; the string is
guarded by its value, so changing it is a recompile."""

import torch

SEP = "alpha, beta, gamma, delta, epsilon, zeta, eta, theta, iota, kappa, lambda, mu, nu, xi, omicron"


def f(x, words, table):
    if SEP.startswith("alpha") and words[0] == "one, two":
        x = x + 1
    return x * table["k, 1"] + len(words)


cf = torch.compile(f, backend="eager")
x = torch.ones(3)
words = ("one, two", "three, four, five, six, seven, eight, nine, ten, eleven, twelve, thirteen",
         "fourteen, fifteen")
table = {"k, 1": 2.0, "k, 2": "a long value, with commas, that goes on and on, past the line"}
print(cf(x, words, table))
print(cf(x, words[:2], table))
