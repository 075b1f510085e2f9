#pragma once
// The H100-like cluster and the GPT models the estimator tests share (numbers only need to be
// plausible here).
#include "estimator/estimator.h"

namespace clustersweep::estimator::test {

// num_gpus GPUs in nodes of 8, one NVLink domain a node, inter_node_gbps of scale-out per GPU.
inline Cluster cluster(int num_gpus = 1024, double inter_node_gbps = 400) {
  Cluster c;
  c.gpu.peak_flops[static_cast<int>(Precision::fp32)] = 67e12;
  c.gpu.peak_flops[static_cast<int>(Precision::bf16)] = 989e12;
  c.gpu.peak_flops[static_cast<int>(Precision::fp16)] = 989e12;
  c.gpu.peak_flops[static_cast<int>(Precision::fp8)] = 1979e12;
  c.gpu.hbm_bytes = 80e9;
  c.gpu.hbm_bytes_per_s = 3.35e12;
  c.gpu.nvlink_bytes_per_s = 450e9;
  c.gpu.tdp_w = 700;
  c.gpu.idle_w = 90;
  c.num_gpus = num_gpus;
  c.gpus_per_node = 8;
  c.nvlink_domain = 8;
  c.nvlink_bytes_per_s = 450e9;
  c.inter_node_bytes_per_s = inter_node_gbps * 1e9 / 8;
  c.hbm_bytes = 80e9;
  c.node_overhead_w = 4600;
  return c;
}

// A GPT of multi-head attention and a 4h GELU MLP.
inline Model gpt(int layers, int hidden, int heads, int vocab) {
  Model m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.mlp = Mlp::gelu;
  m.vocab = vocab;
  return m;
}

// GPT-3 175B at sequence length 2048 and global batch 1536 in bf16.
inline Workload gpt3_175b() { return {gpt(96, 12288, 96, 51200), 2048, 1536, Precision::bf16}; }

}  // namespace clustersweep::estimator::test
