// The calibration fields (docs/calibration.md): every efficiency parameter of Calibration with its
// name in calibration.toml, the bounds `clustersweep validate --fit` may move it within (lo == hi:
// never fitted, a physical prior or a derived value) and what it means; the [calibration] section
// first, then [moe]. Also which prediction interval a model's step takes.
#include <cstddef>
#include <iterator>
#include <string_view>

#include "estimator/estimator.h"

namespace clustersweep::estimator {
namespace {

constexpr CalibrationField kFields[] = {
    {"gemm_eff_max", &Calibration::gemm_eff_max, 0.3, 1.0,
     "fraction of dense peak a large GEMM reaches"},
    {"gemm_half_dim", &Calibration::gemm_half_dim, 16, 2048,
     "smallest GEMM dimension at which a GEMM reaches half of gemm_eff_max"},
    {"attention_eff", &Calibration::attention_eff, 0.15, 1.0,
     "fraction of 16-bit peak the attention score/context matmuls reach"},
    {"hbm_eff", &Calibration::hbm_eff, 0.3, 1.0, "achieved fraction of HBM bandwidth"},
    {"nvlink_eff", &Calibration::nvlink_eff, 0.3, 1.0,
     "achieved fraction of NVLink bandwidth in collectives"},
    {"inter_node_eff", &Calibration::inter_node_eff, 0.2, 1.0,
     "achieved fraction of scale-out bandwidth in collectives"},
    {"expansion_eff", &Calibration::expansion_eff, 0, 0,
     "achieved fraction of expansion-tier bandwidth; not fitted (no published run uses the tier), "
     "set like hbm_eff's prior"},
    {"dp_overlap", &Calibration::dp_overlap, 0.0, 1.0,
     "fraction of a micro-batch's time that can hide data-parallel communication"},
    {"tp_overlap", &Calibration::tp_overlap, 0.0, 0.9,
     "fraction of tensor-parallel communication hidden behind GEMMs"},
    {"per_layer_overhead_s", &Calibration::per_layer_overhead_s, 0.0, 0.01,
     "framework time per layer per micro-batch (fwd+bwd) the GPU waits for whatever it runs"},
    {"per_step_overhead_s", &Calibration::per_step_overhead_s, 0.0, 2.0,
     "framework time per optimizer step"},
    {"launch_s", &Calibration::launch_s, 0.0, 2e-5,
     "host seconds to launch one kernel outside a CUDA graph (PyTorch dispatch and CUDA launch; "
     "5-20 us for eager PyTorch and Transformer Engine modules)"},
    {"tp_overlap_off", &Calibration::tp_overlap_off, 0.0, 0.9,
     "fraction of tensor-parallel communication hidden without userbuffers (at most tp_overlap)"},
    {"pp_overlap", &Calibration::pp_overlap, 0.0, 1.0,
     "fraction of the pipeline sends hidden with pp_comm_overlap"},
    {"flash2_attention_eff", &Calibration::flash2_attention_eff, 0, 0,
     "FlashAttention-2's attention efficiency relative to cuDNN's fused attention; not fitted: "
     "one source's runs alone use it, and what they set would be that source's offset"},
    {"triton_attention_eff", &Calibration::triton_attention_eff, 0, 0,
     "Triton FlashAttention's attention efficiency relative to cuDNN's fused attention; not "
     "fitted: one source's runs alone use it, and what they set would be that source's offset"},
    {"default_inter_node_gbps_per_gpu", &Calibration::default_inter_node_gbps_per_gpu, 0, 0,
     "scale-out Gbit/s per GPU assumed when a run does not state it: one 400 Gbit/s NDR NIC per "
     "GPU, the DGX H100/B200 and GB200 NVL72 reference designs"},
    {"low_precision_gemm_eff", &Calibration::low_precision_gemm_eff, 0.3, 1.0,
     "fp8/fp4 GEMM efficiency relative to 16-bit GEMM efficiency"},
    {"memory_bound_scale", &Calibration::memory_bound_scale, 0.25, 4.0,
     "multiplier on the counted elementwise HBM traffic"},
    {"flash_attention", &Calibration::flash_attention, 0, 0,
     "1 = fused attention (no s^2 tensors stored; FlashAttention, Dao et al. 2022, used by every "
     "current framework), 0 = unfused"},
    {"causal_attention_skip", &Calibration::causal_attention_skip, 0, 0,
     "1 = causal kernels skip the masked half of the score matrix (FlashAttention-2, cuDNN)"},
    {"workspace_bytes", &Calibration::workspace_bytes, 0, 0,
     "bytes per GPU for the CUDA context, cuBLAS/NCCL workspaces and allocator fragmentation "
     "(typical 1-3 GB)"},
    {"nvlink_latency_s", &Calibration::nvlink_latency_s, 0, 0,
     "seconds, alpha of one NVLink collective step when the cluster gives none (NCCL small-message "
     "latency, a few us)"},
    {"inter_node_latency_s", &Calibration::inter_node_latency_s, 0, 0,
     "seconds, alpha of one scale-out collective step when the cluster gives none (InfiniBand/RoCE "
     "NCCL hop, ~10 us)"},
    {"default_expansion_gbytes_per_s", &Calibration::default_expansion_gbytes_per_s, 0, 0,
     "expansion-tier GB/s per GPU assumed when a cluster gives a capacity but no bandwidth (0: "
     "such a tier cannot be used)"},
    {"nic_aggregation", &Calibration::nic_aggregation, 0.0, 1.0,
     "share of the NICs of a group's members inside one NVLink domain a collective drives"},
    {"dropout_masks", &Calibration::dropout_masks, 0, 0,
     "1 = 1-byte dropout masks are stored (GPT-3-era recipes, Korthikanti's count), 0 = no dropout "
     "(Llama, MPT, Nemotron recipes)"},
    {"interval_lo", &Calibration::interval_lo, 0, 0,
     "90% prediction interval of a dense transformer step: lowest measured / predicted"},
    {"interval_hi", &Calibration::interval_hi, 0, 0,
     "90% prediction interval of a dense transformer step: highest measured / predicted"},
    {"interval_widening", &Calibration::interval_widening, 0, 0,
     "exponent on every family's interval ratios for a point with few calibration runs like it"},
    // [moe]: from here on (kFirstMoeField).
    {"load_cv", &Calibration::moe_load_cv, 0.0, 1.0,
     "relative spread of the expert-parallel ranks' token loads under learned (dropless) routing"},
    {"grouped_gemm_eff", &Calibration::moe_grouped_gemm_eff, 0.3, 1.0,
     "efficiency of the grouped expert GEMMs relative to one GEMM of the per-expert size"},
    {"expert_half_rows", &Calibration::moe_expert_half_rows, 0.0, 2048.0,
     "tokens per local expert at which the grouped expert GEMMs lose half their efficiency"},
    {"a2a_eff", &Calibration::moe_a2a_eff, 0.2, 1.0,
     "achieved fraction of link bandwidth in the NCCL all-to-all and all-gather dispatchers"},
    {"deepep_eff", &Calibration::moe_deepep_eff, 0.2, 1.0,
     "achieved fraction of link bandwidth in DeepEP's dispatch and combine"},
    {"hybridep_eff", &Calibration::moe_hybridep_eff, 0.2, 1.0,
     "achieved fraction of link bandwidth in HybridEP's dispatch and combine"},
    {"a2a_overlap", &Calibration::moe_a2a_overlap, 0.0, 0.9,
     "fraction of the all-to-all hidden without a2a_overlap (shared experts during dispatch)"},
    {"permute_passes", &Calibration::moe_permute_passes, 0.0, 12.0,
     "HBM passes over the routed tokens for permutation and unpermutation, forward"},
    {"layer_overhead_s", &Calibration::moe_layer_overhead_s, 0.0, 0.005,
     "host syncs per MoE layer per micro-batch (fwd+bwd), which a CUDA graph of the layer removes"},
    // The two below keep the MoE runs from pulling hbm_eff and low_precision_gemm_eff, which the
    // dense runs share, towards what only the routed kernels reach (docs/calibration.md).
    {"routed_hbm_eff", &Calibration::moe_routed_hbm_eff, 0.2, 1.0,
     "achieved HBM bandwidth of the routed tokens' permutation and activation kernels, relative "
     "to hbm_eff"},
    {"low_precision_expert_eff", &Calibration::moe_low_precision_expert_eff, 0.3, 1.0,
     "fp8/fp4 expert GEMM efficiency relative to low_precision_gemm_eff (per-expert scaling and "
     "casts over small GEMMs)"},
    {"interval_lo", &Calibration::moe_interval_lo, 0, 0,
     "90% prediction interval of a MoE step: lowest measured / predicted"},
    {"interval_hi", &Calibration::moe_interval_hi, 0, 0,
     "90% prediction interval of a MoE step: highest measured / predicted"},
    // [power]: from here on (kFirstPowerField). Fitted by `validate energy_runs.csv --fit` on the
    // metered runs (docs/calibration.md, "Energy").
    {"gemm_power", &Calibration::gemm_power, 0.6, 1.0,
     "GPU board power while running tensor-core GEMMs, fraction of TDP (large GEMMs run at the "
     "power limit)"},
    {"memory_power", &Calibration::memory_power, 0.4, 0.9,
     "GPU board power while running memory-bound kernels, the optimizer and the framework time "
     "between modelled kernels, fraction of TDP"},
    {"comm_power", &Calibration::comm_power, 0.5, 0.5,
     "GPU board power while waiting on exposed communication, fraction of TDP (A100 traces drop "
     "to 0.2-0.75 of TDP at iteration boundaries, Patel et al. 2024)"},
    {"wait_power", &Calibration::wait_power, 0.3, 0.3,
     "GPU board power in the pipeline bubble and host waits, fraction of TDP (clocks up, no "
     "kernels: about twice the idle power)"},
    {"node_power", &Calibration::node_power, 0.2, 1.0,
     "share of a node's maximum power beyond its GPUs (catalog node_overhead_w: CPUs, memory, "
     "NICs, NVSwitches, fans, power-supply loss) drawn while training"},
    {"dvfs_exponent", &Calibration::dvfs_exponent, 0, 0,
     "dynamic power ~ clock^dvfs_exponent under a power cap; fitted on Zeus's V100 power-limit "
     "traces (You et al. 2023; docs/estimator.md)"},
};
constexpr std::size_t kFirstMoeField = 30;
static_assert(std::string_view(kFields[kFirstMoeField].name) == "load_cv");
constexpr std::size_t kFirstPowerField = 43;
static_assert(std::string_view(kFields[kFirstPowerField].name) == "gemm_power");

}  // namespace

const CalibrationField* calibration_fields_begin() noexcept { return std::begin(kFields); }
const CalibrationField* calibration_fields_end() noexcept { return kFields + kFirstMoeField; }
const CalibrationField* moe_calibration_fields_begin() noexcept { return kFields + kFirstMoeField; }
const CalibrationField* moe_calibration_fields_end() noexcept { return kFields + kFirstPowerField; }
const CalibrationField* power_calibration_fields_begin() noexcept {
  return kFields + kFirstPowerField;
}
const CalibrationField* power_calibration_fields_end() noexcept { return std::end(kFields); }

StepInterval step_interval(const Calibration& c, const Model& model) noexcept {
  return is_moe(model) ? StepInterval{c.moe_interval_lo, c.moe_interval_hi}
                       : StepInterval{c.interval_lo, c.interval_hi};
}

}  // namespace clustersweep::estimator
