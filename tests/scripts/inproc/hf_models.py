"""transformers models (tiny configs, random weights, nothing from the hub)
recorded in process, one block each, in one process: GPT-2 compiled before
its block, BERT after GPT-2's compiles (Dynamo's process-wide counters have
moved), a Llama training step."""
import sys

import torch
from transformers import (BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig,
                          LlamaForCausalLM)

import dynrec

out = sys.argv[1]
torch.manual_seed(0)
gpt = GPT2LMHeadModel(GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64,
                                 bos_token_id=1, eos_token_id=2)).eval()
cg = torch.compile(gpt, backend="eager")
with torch.no_grad():
    cg(input_ids=torch.randint(0, 100, (1, 5)))  # before the block
    with dynrec.record(out + "/gpt2.db"):
        for n in (5, 7, 9):
            cg(input_ids=torch.randint(0, 100, (1, n)))

bert = BertModel(BertConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=32,
                            intermediate_size=64, vocab_size=100,
                            max_position_embeddings=64)).eval()
cb = torch.compile(bert, backend="eager")
with torch.no_grad(), dynrec.record(out + "/bert.db"):
    ids = torch.randint(0, 100, (2, 8))
    cb(input_ids=ids, attention_mask=torch.ones(2, 8, dtype=torch.long))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 5:] = 0
    cb(input_ids=ids, attention_mask=mask)

llama = LlamaForCausalLM(LlamaConfig(num_hidden_layers=2, num_attention_heads=2,
                                     num_key_value_heads=1, hidden_size=32, intermediate_size=64,
                                     vocab_size=100, max_position_embeddings=64))
opt = torch.optim.SGD(llama.parameters(), lr=0.01)
cl = torch.compile(llama, backend="eager")
with dynrec.record(out + "/llama.db"):
    for n in (6, 6, 10):
        ids = torch.randint(0, 100, (1, n))
        loss = cl(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
print("recorded")
