#!/usr/bin/env python3
"""Writes a tiny llama-architecture GGUF model with random weights and the real Qwen2 tokenizer.

usage: tiny_model.py VOCAB_GGUF OUT_GGUF   (PYTHONPATH must hold llama.cpp's gguf-py; needs numpy)

The model is useless as a language model and cheap to run (2 layers, 64 wide, ~84 MB): the tests need
a real server, not good answers. So that answers stay short and JSON strings close, the output layer
carries a per-token prior through hidden dimension 0: every token embedding holds 1.0 there and no
layer writes to it, so after the final norm it is a constant that output.weight scales into a logit
bonus for common words, punctuation, digits, quotes and the end-of-turn token. Deterministic (seeded).
"""
import sys

import numpy as np
from gguf import GGUFReader, GGUFWriter

WIDTH, HEADS, FFN, LAYERS, CONTEXT = 64, 4, 128, 2, 4096
DIM0_AFTER_NORM = 3.0  # what dimension 0 holds after RMS norm, roughly
WORDS = """the of and to a in is it you that he was for on are with as I his they be at one have this from
or had by word but what some we can out other were all there when up use your how said an each she which
do their time if will way about many then them write would like so these her long make thing see him two
has look more day could go come did number sound no most people my over know water than call first who
may down side been now find any new work part take get place made live where after back little only
round man year came show every good me give our under name very through just form sentence great think
say help low line turn much mean before move right boy old too same tell does set three want air well
also play small end put home read hand large add even land here must big high such follow act why ask
men change went light kind off need house try us again point world near build self earth hello yes ok""".split()


def field(reader, name):
    return reader.fields[name].contents()


def token_prior(tokens, types):
    index = {token: i for i, token in enumerate(tokens)}
    prior = np.zeros(len(tokens), dtype=np.float32)
    for word in WORDS:  # byte-level BPE writes a leading space as U+0120
        for form in (word, word.capitalize(), "\u0120" + word, "\u0120" + word.capitalize()):
            if form in index:
                prior[index[form]] = 10.0
    for mark in [".", ",", "!", "?", ":", "\u0120-", "\u010a"] + list("0123456789"):
        prior[index[mark]] = 10.0
    for quote in ['"', '",', '"}', '":']:  # lets grammar-constrained strings end soon
        prior[index[quote]] = 15.0
    prior[np.asarray(types) == 4] = -30.0  # user-defined padding tokens
    prior[index["<|im_start|>"]] = -30.0
    prior[index["<|endoftext|>"]] = 8.0
    prior[index["<|im_end|>"]] = 17.0
    return prior, index


def weights(rng, vocab, prior):
    def normal(shape, std):
        return rng.normal(0.0, std, size=shape).astype(np.float32)

    tensors = {}
    embedding = normal((vocab, WIDTH), 0.3)
    embedding[:, 0] = 1.0
    tensors["token_embd.weight"] = embedding
    for layer in range(LAYERS):
        block = f"blk.{layer}."
        tensors[block + "attn_norm.weight"] = np.ones(WIDTH, dtype=np.float32)
        for name in ("attn_q", "attn_k", "attn_v"):
            tensors[block + name + ".weight"] = normal((WIDTH, WIDTH), 0.15)
        attn_out = normal((WIDTH, WIDTH), 0.1)
        attn_out[0, :] = 0.0  # nothing writes hidden dimension 0
        tensors[block + "attn_output.weight"] = attn_out
        tensors[block + "ffn_norm.weight"] = np.ones(WIDTH, dtype=np.float32)
        tensors[block + "ffn_gate.weight"] = normal((FFN, WIDTH), 0.15)
        tensors[block + "ffn_up.weight"] = normal((FFN, WIDTH), 0.15)
        ffn_down = normal((WIDTH, FFN), 0.1)
        ffn_down[0, :] = 0.0
        tensors[block + "ffn_down.weight"] = ffn_down
    tensors["output_norm.weight"] = np.ones(WIDTH, dtype=np.float32)
    output = normal((vocab, WIDTH), 0.07)
    output[:, 0] = prior / DIM0_AFTER_NORM
    tensors["output.weight"] = output
    return tensors


def main(vocab_path, out_path):
    vocab = GGUFReader(vocab_path)
    tokens = field(vocab, "tokenizer.ggml.tokens")
    types = field(vocab, "tokenizer.ggml.token_type")
    prior, index = token_prior(tokens, types)
    out = GGUFWriter(out_path, "llama")
    out.add_name("tiny-random-llama (qwen2 vocab)")
    out.add_file_type(0)
    out.add_context_length(CONTEXT)
    out.add_embedding_length(WIDTH)
    out.add_block_count(LAYERS)
    out.add_feed_forward_length(FFN)
    out.add_head_count(HEADS)
    out.add_head_count_kv(HEADS)
    out.add_rope_dimension_count(WIDTH // HEADS)
    out.add_rope_freq_base(10000.0)
    out.add_layer_norm_rms_eps(1e-5)
    out.add_vocab_size(len(tokens))
    out.add_tokenizer_model(field(vocab, "tokenizer.ggml.model"))
    out.add_tokenizer_pre(field(vocab, "tokenizer.ggml.pre"))
    out.add_token_list(tokens)
    out.add_token_types(types)
    out.add_token_merges(field(vocab, "tokenizer.ggml.merges"))
    out.add_chat_template(field(vocab, "tokenizer.chat_template"))
    out.add_bos_token_id(index["<|endoftext|>"])
    out.add_eos_token_id(index["<|im_end|>"])
    out.add_pad_token_id(index["<|endoftext|>"])
    out.add_add_bos_token(False)
    for name, tensor in weights(np.random.default_rng(1234), len(tokens), prior).items():
        out.add_tensor(name, tensor)
    out.write_header_to_file()
    out.write_kv_data_to_file()
    out.write_tensors_to_file()
    out.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
