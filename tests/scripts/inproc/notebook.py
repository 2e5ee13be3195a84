"""Runs a three-cell notebook in a real Jupyter kernel (nbclient, ipykernel):
the last cell records a compile and a recompile with dynrec.record.  Exit
77 when nbclient or ipykernel is missing (the test skips)."""
import sys

try:
    import nbformat
    from nbclient import NotebookClient
    import ipykernel  # noqa: F401 -- the kernel nbclient starts
except ImportError as exc:
    print("skip:", exc)
    sys.exit(77)

nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(s) for s in [
    "import torch\nimport dynrec",
    "def f(x):\n    return x.sin() + 1\n\ncf = torch.compile(f, backend='eager')",
    "with dynrec.record(%r):\n    print(cf(torch.ones(3)).sum().item())\n    cf(torch.ones(3, 2))"
    % sys.argv[1],
]]
NotebookClient(nb, timeout=150, kernel_name="python3").execute()
for cell in nb.cells:
    for out in cell.get("outputs", []):
        print(out.get("output_type"), out.get("text", out.get("ename", "")).strip())
