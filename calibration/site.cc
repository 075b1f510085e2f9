#include "calibration/site.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "base/error.h"
#include "calibration/fit.h"
#include "calibration/validation.h"
#include "spaces/catalog.h"
#include "spaces/toml_text.h"

namespace clustersweep::spaces {

namespace est = estimator;

namespace {

constexpr int K = kNumSiteFactors;

constexpr SiteFactorInfo kFactors[K] = {
    {"compute", "compute", false,
     "GEMM and attention efficiency: gemm_eff_max, attention_eff, dlrm.mlp_eff_max"},
    {"memory", "memory-bound", false,
     "memory-bound efficiency: hbm_eff, dlrm.hbm_eff, dlrm.embedding_eff"},
    {"scale_up", "scale-up", false, "scale-up collective efficiency: nvlink_eff"},
    {"scale_out", "scale-out", false, "scale-out collective efficiency: inter_node_eff"},
    {"host", "host overhead", true,
     "host and framework seconds (a time multiplier): per_layer_overhead_s, per_step_overhead_s, "
     "launch_s, moe.layer_overhead_s, dlrm.per_table_overhead_s, dlrm.per_step_overhead_s, "
     "dlrm.launch_s"},
    {"dispatcher", "MoE dispatcher", false,
     "MoE token dispatch and combine efficiency: moe.a2a_eff, moe.deepep_eff, moe.hybridep_eff"},
    {"embedding_exchange", "embedding exchange", false,
     "recommendation-model embedding all-to-all efficiency: dlrm.a2a_eff"},
};

// A factor whose mechanism moves no run's log step by more than this per unit log-factor is one
// the runs cannot inform (a mechanism under 2% of each step): it keeps its prior.
constexpr double kMinSensitivity = 0.02;
// Finite-difference step of the Jacobian, in log-factor.
constexpr double kStep = 0.01;
// Degrees of freedom of the prior on the site's residual scale: how many runs it takes for the
// site's own agreement to count as much as the published sources' within-source spread.
constexpr double kScaleDof = 4;
// Sites (a source on one accelerator) of fewer runs are left out of the prior's measurement.
constexpr std::size_t kMinPriorRuns = 4;
// Degrees of freedom of the Student-t likelihood of a run's log residual: runs of one source
// include some that no factor explains (2x off in the published data), and a Gaussian would let
// one of them drag every factor.
constexpr double kTailDof = 4;
// A run's standardised leave-one-out residual above which the report names it.
constexpr double kDisagreeing = 1.5;

double efficiency(double value, double factor) { return std::min(1.0, value * factor); }

// Solves the symmetric positive definite system a x = b (Cholesky) and returns a's inverse in
// `inverse`; n <= K.
void spd_solve(std::array<double, K * K> a, int n, const double* b, double* x,
               std::array<double, K * K>& inverse) {
  std::array<double, K * K> l{};
  for (int j = 0; j < n; ++j) {
    double d = a[j * K + j];
    for (int k = 0; k < j; ++k) d -= l[j * K + k] * l[j * K + k];
    l[j * K + j] = std::sqrt(std::max(d, 1e-300));
    for (int i = j + 1; i < n; ++i) {
      double s = a[i * K + j];
      for (int k = 0; k < j; ++k) s -= l[i * K + k] * l[j * K + k];
      l[i * K + j] = s / l[j * K + j];
    }
  }
  auto solve = [&](const double* rhs, double* out) {
    std::array<double, K> y{};
    for (int i = 0; i < n; ++i) {
      double s = rhs[i];
      for (int k = 0; k < i; ++k) s -= l[i * K + k] * y[k];
      y[i] = s / l[i * K + i];
    }
    for (int i = n - 1; i >= 0; --i) {
      double s = y[i];
      for (int k = i + 1; k < n; ++k) s -= l[k * K + i] * out[k];
      out[i] = s / l[i * K + i];
    }
  };
  solve(b, x);
  for (int c = 0; c < n; ++c) {
    std::array<double, K> e{}, col{};
    e[c] = 1;
    solve(e.data(), col.data());
    for (int r = 0; r < n; ++r) inverse[r * K + c] = col[r];
  }
}

// log(predicted) of every run under the factors; a prediction that is not a positive number is
// the measurement (no pull either way).
std::vector<double> log_predictions(const std::vector<SiteRun>& runs, const est::Calibration& base,
                                    const SiteVector& theta) {
  const est::Calibration c = apply_site_factors(base, theta);
  std::vector<double> out(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double p = runs[i].predict_s(c);
    out[i] = p > 0 && std::isfinite(p) ? std::log(p) : std::log(runs[i].measured_s);
  }
  return out;
}

// The sorted distinct values of `values`.
std::vector<std::string> distinct(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

double half_width(est::StepInterval i) { return (i.hi - i.lo) / 2; }

// The support tables of `base` with `runs` added.
CalibrationSupport add_support(const CalibrationSupport& base, const std::vector<SiteRun>& runs) {
  std::vector<SupportRun> counted;
  for (const SiteRun& r : runs) counted.push_back(r.support);
  const CalibrationSupport site = count_runs(counted);
  CalibrationSupport out = base;
  for (int f = 0; f < 3; ++f) {
    const FamilySupport& s = site.family[f];
    FamilySupport& o = out.family[f];
    if (s.runs == 0) continue;
    o.runs += s.runs;
    o.max_cp = std::max(o.max_cp, s.max_cp);
    for (const auto& [name, n] : s.accelerators) o.accelerators[name] += n;
    for (const auto& [name, n] : s.regimes) o.regimes[name] += n;
  }
  return out;
}

std::string toml_strings(const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const auto& v : values) quoted.push_back(toml_quoted(v));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

}  // namespace

const SiteFactorInfo& site_factor_info(int factor) noexcept { return kFactors[factor]; }

est::Calibration apply_site_factors(const est::Calibration& base, const SiteVector& log_factor) {
  est::Calibration c = base;
  auto factor = [&](SiteFactor f) { return std::exp(log_factor[static_cast<int>(f)]); };
  if (const double f = factor(SiteFactor::compute); f != 1) {
    c.gemm_eff_max = efficiency(c.gemm_eff_max, f);
    c.attention_eff = efficiency(c.attention_eff, f);
    c.dlrm.mlp_eff_max = efficiency(c.dlrm.mlp_eff_max, f);
  }
  if (const double f = factor(SiteFactor::memory); f != 1) {
    c.hbm_eff = efficiency(c.hbm_eff, f);
    c.dlrm.hbm_eff = efficiency(c.dlrm.hbm_eff, f);
    c.dlrm.embedding_eff = efficiency(c.dlrm.embedding_eff, f);
  }
  if (const double f = factor(SiteFactor::scale_up); f != 1)
    c.nvlink_eff = efficiency(c.nvlink_eff, f);
  if (const double f = factor(SiteFactor::scale_out); f != 1)
    c.inter_node_eff = efficiency(c.inter_node_eff, f);
  if (const double f = factor(SiteFactor::host); f != 1) {
    c.per_layer_overhead_s *= f;
    c.per_step_overhead_s *= f;
    c.launch_s *= f;
    c.moe_layer_overhead_s *= f;
    c.dlrm.per_table_overhead_s *= f;
    c.dlrm.per_step_overhead_s *= f;
    c.dlrm.launch_s *= f;
  }
  if (const double f = factor(SiteFactor::dispatcher); f != 1) {
    c.moe_a2a_eff = efficiency(c.moe_a2a_eff, f);
    c.moe_deepep_eff = efficiency(c.moe_deepep_eff, f);
    c.moe_hybridep_eff = efficiency(c.moe_hybridep_eff, f);
  }
  if (const double f = factor(SiteFactor::embedding_exchange); f != 1)
    c.dlrm.a2a_eff = efficiency(c.dlrm.a2a_eff, f);
  return c;
}

namespace {

// The rows a fit takes (those with no reason), each predicted from its fit sample; `measured_s`
// reads a row's measured step from the row and its sample.
template <class Row, class MeasuredS>
std::vector<SiteRun> to_site_runs(const std::vector<Row>& rows, MeasuredS measured_s) {
  std::vector<SiteRun> out;
  const auto runs = fit_runs(rows);
  std::size_t k = 0;
  for (const auto& r : rows) {
    if (!r.reason.empty()) continue;
    SiteRun s;
    s.id = r.id;
    s.source = r.source;
    s.gpu = r.gpu;
    s.support = runs.support[k];
    s.family = s.support.family;
    s.measured_s = measured_s(r, runs.samples[k]);
    s.predict_s = [sample = runs.samples[k]](const est::Calibration& c) {
      return est::predict_step_s(sample, c);
    };
    out.push_back(std::move(s));
    ++k;
  }
  return out;
}

}  // namespace

std::vector<SiteRun> site_runs(const std::vector<MeasuredRun>& rows) {
  return to_site_runs(rows, [](const MeasuredRun& r, const est::Sample&) { return r.measured_s; });
}

std::vector<SiteRun> site_runs(const std::vector<MeasuredDlrmRun>& rows) {
  return to_site_runs(rows, [](const MeasuredDlrmRun&, const est::DlrmSample& sample) {
    return sample.measured_step_s;
  });
}

SiteRunsRead read_site_runs(const std::vector<std::string>& paths, const est::Calibration& base) {
  SiteRunsRead out;
  auto take = [&](const std::string& path, const auto& rows) {
    for (const auto& r : rows) {
      if (r.unknown_gpu)
        throw InputError(fmt::format(
            "{}: {}; a site run must be on an accelerator of the catalog (clustersweep catalog)",
            r.at, r.reason));
      if (!r.reason.empty()) out.skipped.push_back(fmt::format("{}: {}: {}", path, r.id, r.reason));
    }
    auto runs = site_runs(rows);
    out.runs.insert(out.runs.end(), std::make_move_iterator(runs.begin()),
                    std::make_move_iterator(runs.end()));
  };
  for (const auto& path : paths) {
    if (is_energy_runs(path))
      throw InputError(fmt::format(
          "{}: a training-energy runs file; calibrate takes step-time runs (the format of "
          "transformer_runs.csv, moe_runs.csv or dlrm_runs.csv)",
          path));
    if (is_dlrm_runs(path))
      take(path, read_dlrm_runs(path, base));
    else
      take(path, read_runs(path, base));
  }
  if (out.runs.empty())
    throw InputError(fmt::format(
        "{}: no predictable row; a site calibration needs at least one run with a measured step",
        fmt::join(paths, ", ")));
  return out;
}

SiteFit fit_site_factors(const std::vector<SiteRun>& runs, const est::Calibration& base,
                         const SitePrior& prior) {
  SiteFit fit;
  const std::size_t n = runs.size();
  for (int k = 0; k < K; ++k) {
    fit.sd[k] = prior.sd[k];
    fit.covariance[k * K + k] = prior.sd[k] * prior.sd[k];
  }
  if (n == 0) return fit;
  std::vector<double> log_measured(n);
  for (std::size_t i = 0; i < n; ++i) log_measured[i] = std::log(runs[i].measured_s);
  const double noise = prior.within_sd * prior.within_sd;

  SiteVector theta{};
  std::vector<double> p = log_predictions(runs, base, theta);
  // Iteratively reweighted: a run's weight in the Student-t likelihood, over the noise variance.
  auto robust_weight = [&](double r) {
    return (kTailDof + 1) / (kTailDof + r * r / noise) / noise;
  };
  std::vector<double> jac(n * K, 0.0);
  auto jacobian = [&](const std::vector<double>& at) {
    for (int k = 0; k < K; ++k) {
      SiteVector t = theta;
      t[k] += kStep;
      const std::vector<double> q = log_predictions(runs, base, t);
      for (std::size_t i = 0; i < n; ++i) jac[i * K + k] = (q[i] - at[i]) / kStep;
    }
  };
  auto objective = [&](const SiteVector& t, const std::vector<double>& pred) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double r = log_measured[i] - pred[i];
      s += runs[i].weight * (kTailDof + 1) * std::log1p(r * r / (kTailDof * noise));
    }
    for (int k = 0; k < K; ++k) s += t[k] * t[k] / (prior.sd[k] * prior.sd[k]);
    return s;
  };

  // Which factors the runs show, at the base.
  jacobian(p);
  std::vector<int> free;
  for (int k = 0; k < K; ++k) {
    double largest = 0;
    for (std::size_t i = 0; i < n; ++i) largest = std::max(largest, std::fabs(jac[i * K + k]));
    fit.informed[k] = largest >= kMinSensitivity && prior.sd[k] > 0;
    if (fit.informed[k]) free.push_back(k);
  }
  const int m = static_cast<int>(free.size());
  std::array<double, K * K> inverse{};
  auto normal_equations = [&](std::array<double, K * K>& h, std::array<double, K>& g) {
    h.fill(0);
    g.fill(0);
    for (int a = 0; a < m; ++a) {
      const int ka = free[a];
      for (std::size_t i = 0; i < n; ++i) {
        const double w = runs[i].weight * robust_weight(log_measured[i] - p[i]);
        g[a] += w * jac[i * K + ka] * (log_measured[i] - p[i]);
        for (int b = 0; b < m; ++b) h[a * K + b] += w * jac[i * K + ka] * jac[i * K + free[b]];
      }
      h[a * K + a] += 1 / (prior.sd[ka] * prior.sd[ka]);
      g[a] -= theta[ka] / (prior.sd[ka] * prior.sd[ka]);
    }
  };
  if (m > 0) {
    double value = objective(theta, p);
    for (int iteration = 0; iteration < 20; ++iteration) {
      std::array<double, K * K> h{};
      std::array<double, K> g{}, step{};
      normal_equations(h, g);
      spd_solve(h, m, g.data(), step.data(), inverse);
      // Damped: halve the step until the posterior improves (max() kinks in the step model).
      double scale = 1;
      bool improved = false;
      for (int tries = 0; tries < 8 && !improved; ++tries, scale /= 2) {
        SiteVector t = theta;
        for (int a = 0; a < m; ++a) t[free[a]] += scale * step[a];
        std::vector<double> q = log_predictions(runs, base, t);
        const double v = objective(t, q);
        if (v < value) {
          improved = true;
          double moved = 0;
          for (int a = 0; a < m; ++a) moved = std::max(moved, std::fabs(scale * step[a]));
          theta = t;
          p = std::move(q);
          value = v;
          jacobian(p);
          if (moved < 1e-5) iteration = 20;
        }
      }
      if (!improved) break;
    }
    // The Laplace approximation at the mode: the inverse Gauss-Newton Hessian.
    std::array<double, K * K> h{};
    std::array<double, K> g{}, step{};
    normal_equations(h, g);
    spd_solve(h, m, g.data(), step.data(), inverse);
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < m; ++b) fit.covariance[free[a] * K + free[b]] = inverse[a * K + b];
    for (int a = 0; a < m; ++a) fit.sd[free[a]] = std::sqrt(inverse[a * K + a]);
  }
  fit.log_factor = theta;
  fit.log_residuals.resize(n);
  for (std::size_t i = 0; i < n; ++i) fit.log_residuals[i] = log_measured[i] - p[i];
  fit.jacobian = jac;
  return fit;
}

SitePrior fit_site_prior(const std::vector<SiteRun>& runs, const est::Calibration& base) {
  std::map<std::string, std::vector<SiteRun>> by_source;
  for (const SiteRun& r : runs) by_source[r.source].push_back(r);
  // A source of a few runs fits its factors to them nearly exactly: it would tell the
  // within-source spread as smaller than it is.
  std::erase_if(by_source, [](const auto& g) { return g.second.size() < kMinPriorRuns; });
  SitePrior prior;
  prior.sd.fill(0.3);
  prior.within_sd = 0.15;
  prior.sources = static_cast<int>(by_source.size());
  for (const auto& [site, group] : by_source) prior.runs += static_cast<int>(group.size());
  // Expectation-maximisation: each source's factors and their posterior given the widths, then
  // the widths and the residual sd that make those most likely.
  for (int iteration = 0; iteration < 8; ++iteration) {
    SiteVector second{};
    std::array<int, K> count{};
    double squares = 0;
    std::size_t residuals = 0;
    for (const auto& [source, group] : by_source) {
      const SiteFit fit = fit_site_factors(group, base, prior);
      for (int k = 0; k < K; ++k) {
        if (!fit.informed[k]) continue;
        second[k] += fit.log_factor[k] * fit.log_factor[k] + fit.covariance[k * K + k];
        ++count[k];
      }
      for (std::size_t i = 0; i < group.size(); ++i) {
        double spread = 0;  // the residual's variance from the factors' posterior
        for (int a = 0; a < K; ++a)
          for (int b = 0; b < K; ++b)
            if (fit.informed[a] && fit.informed[b])
              spread +=
                  fit.jacobian[i * K + a] * fit.covariance[a * K + b] * fit.jacobian[i * K + b];
        const double r2 = fit.log_residuals[i] * fit.log_residuals[i];
        const double w = (kTailDof + 1) / (kTailDof + r2 / (prior.within_sd * prior.within_sd));
        squares += w * r2 + spread;
        ++residuals;
      }
    }
    // A width seen by fewer than two sources is not measured; it keeps its start.
    for (int k = 0; k < K; ++k)
      if (count[k] >= 2) prior.sd[k] = std::clamp(std::sqrt(second[k] / count[k]), 0.02, 1.0);
    prior.informed_sources = count;
    if (residuals > 0) prior.within_sd = std::sqrt(squares / static_cast<double>(residuals));
  }
  return prior;
}

SitePrior parse_site_prior(std::string_view text, std::string_view filename) {
  const toml::table root = parse_toml(text, filename);
  SitePrior prior;
  const toml::node* table = root.get("site_prior");
  if (!table || !table->is_table())
    throw InputError(fmt::format("{}:1:1: missing the [site_prior] table", filename));
  const toml::table& t = *table->as_table();
  auto number = [&](std::string_view key) {
    const toml::node* node = t.get(key);
    const auto v = node ? node->value<double>() : std::nullopt;
    if (!v || !std::isfinite(*v) || *v < 0)
      throw InputError(
          fmt::format("{}: site_prior.{}: must be a non-negative number", filename, key));
    return *v;
  };
  prior.within_sd = number("within_sd");
  prior.sources = static_cast<int>(number("sources"));
  prior.runs = static_cast<int>(number("runs"));
  for (int k = 0; k < K; ++k) {
    prior.sd[k] = number(fmt::format("{}_sd", kFactors[k].name));
    prior.informed_sources[k] =
        static_cast<int>(number(fmt::format("{}_sources", kFactors[k].name)));
  }
  return prior;
}

std::string format_site_prior(const SitePrior& prior, std::string_view header) {
  std::string out;
  for (std::string_view rest = header; !rest.empty();) {
    const auto end = rest.find('\n');
    out += fmt::format("# {}\n", rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  out += fmt::format(
      "format_version = 1\n\n[site_prior]\n# residual sd of log(measured / predicted) within one "
      "source once its factors are fitted\nwithin_sd = {:.4f}\nsources = {}\nruns = {}\n",
      prior.within_sd, prior.sources, prior.runs);
  for (int k = 0; k < K; ++k)
    out += fmt::format("# {}\n{}_sd = {:.4f}\n{}_sources = {}\n", kFactors[k].doc, kFactors[k].name,
                       prior.sd[k], kFactors[k].name, prior.informed_sources[k]);
  return out;
}

const SitePrior& builtin_site_prior() {
  static const SitePrior prior =
      parse_site_prior(embedded_text("site_priors.toml"), "site_priors.toml");
  return prior;
}

SiteCalibration calibrate_site(const std::vector<SiteRun>& runs, const est::Calibration& base,
                               const CalibrationSupport& base_support, const SitePrior& prior) {
  SiteCalibration site;
  site.prior = prior;
  site.runs = runs.size();
  site.fit = fit_site_factors(runs, base, prior);
  site.support = add_support(base_support, runs);
  site.calibration = base;
  std::map<SupportFamily, int> family_runs;
  for (const SiteRun& r : runs) {
    site.ids.push_back(r.id);
    site.sources.push_back(r.source);
    site.accelerators.push_back(r.gpu);
    site.families.push_back(to_string(r.family));
    ++family_runs[r.family];
  }
  site.sources = distinct(site.sources);
  site.accelerators = distinct(site.accelerators);
  site.families = distinct(site.families);
  for (const auto& [f, count] : family_runs)
    if (count > family_runs[site.main_family]) site.main_family = f;
  site.base_interval = site.interval = family_interval(base, site.main_family);
  site.loo_mape = std::numeric_limits<double>::quiet_NaN();
  if (runs.empty()) return site;
  site.calibration = apply_site_factors(base, site.fit.log_factor);

  // Each run predicted by the factors of the others: the site's own check of the factors, and
  // how far its runs agree beyond what the published sources' spread expects.
  const std::size_t n = runs.size();
  double standardised = 0;  // sum of squared standardised leave-one-out residuals
  if (n >= 2) {
    site.loo_log_residuals.resize(n);
    double mape = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<SiteRun> others;
      for (std::size_t j = 0; j < n; ++j)
        if (j != i) others.push_back(runs[j]);
      const SiteFit f = fit_site_factors(others, base, prior);
      const double predicted = runs[i].predict_s(apply_site_factors(base, f.log_factor));
      const double r = std::log(runs[i].measured_s / predicted);
      site.loo_log_residuals[i] = r;
      mape += std::fabs(predicted / runs[i].measured_s - 1);
      // Its expected variance: the within-source spread and the others' factors' posterior.
      double expected = prior.within_sd * prior.within_sd;
      for (int a = 0; a < K; ++a)
        for (int b = 0; b < K; ++b)
          expected +=
              site.fit.jacobian[i * K + a] * f.covariance[a * K + b] * site.fit.jacobian[i * K + b];
      const double z = r / std::sqrt(expected);
      standardised += z * z;
      if (std::fabs(z) > site.disagreement) {
        site.disagreement = std::fabs(z);
        site.disagreeing_run = runs[i].id;
      }
    }
    site.loo_mape = mape / static_cast<double>(n);
    if (site.disagreement < kDisagreeing) site.disagreeing_run.clear();
  }
  // The posterior predictive of a run like the site's: the within-source spread of the published
  // runs plus the run's share of the factors' posterior uncertainty, scaled by how far the site's
  // runs agree with each other (a scaled-chi-square update of the residual scale with kScaleDof
  // prior degrees of freedom). With no runs it is the base's interval, measured on held-out
  // sources.
  double posterior_var = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (int a = 0; a < K; ++a)
      for (int b = 0; b < K; ++b)
        posterior_var += site.fit.jacobian[i * K + a] * site.fit.covariance[a * K + b] *
                         site.fit.jacobian[i * K + b];
  const double nn = static_cast<double>(n);
  const double agreement = n >= 2 ? (kScaleDof + standardised) / (kScaleDof + nn) : 1.0;
  const double log_half_width =
      kSiteZ90 * std::sqrt(agreement * (prior.within_sd * prior.within_sd + posterior_var / nn));
  for (const auto& [f, count] : family_runs)
    set_family_interval(site.calibration, f, {std::exp(-log_half_width), std::exp(log_half_width)});
  site.interval = family_interval(site.calibration, site.main_family);
  return site;
}

std::string format_site_report(const SiteCalibration& site) {
  std::vector<std::string> parts;
  const auto runs = site.runs == 1 ? std::string("1 run") : fmt::format("{} runs", site.runs);
  bool first = true;
  for (int k = 0; k < K; ++k) {
    const SiteFactorInfo& info = kFactors[k];
    if (!site.fit.informed[k]) continue;
    const double theta = site.fit.log_factor[k];
    const double sd = site.fit.sd[k];
    std::string part =
        fmt::format("{} x{:.2f} ({:.2f}-{:.2f})", info.label, std::exp(theta),
                    std::exp(theta - kSiteZ90 * sd), std::exp(theta + kSiteZ90 * sd));
    if (first) part += " from " + runs;
    first = false;
    parts.push_back(part);
  }
  std::vector<std::string> unseen;
  for (int k = 0; k < K; ++k)
    if (!site.fit.informed[k]) unseen.push_back(kFactors[k].label);
  std::string out;
  if (parts.empty())
    out += fmt::format("no factor moved: {} show no mechanism of the step model\n", runs);
  else
    out += fmt::format("{}\n", fmt::join(parts, "; "));
  if (!unseen.empty())
    out += fmt::format("unchanged (your runs do not show it): {}\n", fmt::join(unseen, ", "));
  if (std::isfinite(site.loo_mape))
    out += fmt::format("leave-one-out error on your runs {:.0f}%\n", 100 * site.loo_mape);
  if (!site.disagreeing_run.empty())
    out += fmt::format(
        "run {} disagrees with the others ({:.1f} sd from what they predict); check it, or "
        "expect wider intervals\n",
        site.disagreeing_run, site.disagreement);
  out += fmt::format("{} intervals now ±{:.0f}% (were ±{:.0f}%)\n", to_string(site.main_family),
                     100 * half_width(site.interval), 100 * half_width(site.base_interval));
  for (const std::string& s : site.skipped) out += fmt::format("left out {}\n", s);
  return out;
}

std::string format_site_calibration(const SiteCalibration& site, std::string_view header) {
  std::string out = format_calibration(site.calibration, header, site.support);
  if (site.runs == 0) return out;
  out += fmt::format(
      "\n[site]\n# the measured runs this calibration was site-calibrated on "
      "(docs/calibration.md, \"Your own cluster\")\nruns = {}\nids = {}\nsources = {}\n"
      "accelerators = {}\nfamilies = {}\n",
      site.runs, toml_strings(site.ids), toml_strings(site.sources),
      toml_strings(site.accelerators), toml_strings(site.families));
  if (std::isfinite(site.loo_mape)) out += fmt::format("loo_mape = {:.4f}\n", site.loo_mape);
  if (!site.disagreeing_run.empty())
    out += fmt::format("disagreeing_run = {}\n", toml_quoted(site.disagreeing_run));
  out += fmt::format(
      "# the 90% interval of a {} step, measured / predicted, before and after\n"
      "interval_family = \"{}\"\nbase_interval = [{:.6g}, {:.6g}]\ninterval = [{:.6g}, {:.6g}]\n",
      to_string(site.main_family), to_string(site.main_family), site.base_interval.lo,
      site.base_interval.hi, site.interval.lo, site.interval.hi);
  for (int k = 0; k < K; ++k) {
    const double theta = site.fit.log_factor[k];
    const double sd = site.fit.sd[k];
    out += fmt::format(
        "\n[site.factors.{}]\n# {}\nvalue = {:.6g}\nrange90 = [{:.6g}, {:.6g}]\n"
        "# how far it moved from the base, in prior sds of log(value)\nmoved_sd = {:.4g}\n"
        "informed = {}\n",
        kFactors[k].name, kFactors[k].doc, std::exp(theta), std::exp(theta - kSiteZ90 * sd),
        std::exp(theta + kSiteZ90 * sd), site.prior.sd[k] > 0 ? theta / site.prior.sd[k] : 0.0,
        site.fit.informed[k]);
  }
  return out;
}

namespace {

// The shots protocol over runs of any family; `fit_without(source)` is the calibration fitted on
// the runs of the other sources.
template <class FitWithout>
ShotsReport shots_of(const std::vector<SiteRun>& runs, FitWithout fit_without,
                     const ShotsOptions& options) {
  ShotsReport report;
  report.shots = options.shots;
  report.draws = options.draws;
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < runs.size(); ++i) groups[{runs[i].source, runs[i].gpu}].push_back(i);
  const auto min_runs = static_cast<std::size_t>(std::max(options.min_runs, options.shots + 3));
  std::map<std::string, std::vector<std::size_t>> by_source;  // the groups' runs, by source
  for (const auto& [key, members] : groups)
    if (members.size() >= min_runs) by_source[key.first].push_back(0);
  std::vector<double> half_widths;
  const CalibrationSupport no_support;
  for (const auto& [source, unused] : by_source) {
    const est::Calibration base = fit_without(source);
    std::vector<SiteRun> others;
    for (const SiteRun& r : runs)
      if (r.source != source) others.push_back(r);
    const SitePrior prior = fit_site_prior(others, base);
    for (const auto& [key, members] : groups) {
      if (key.first != source || members.size() < min_runs) continue;
      ShotsGroup g;
      g.source = key.first;
      g.gpu = key.second;
      g.runs = members.size();
      double no_shot = 0, shot = 0;
      std::size_t counted = 0;
      for (int draw = 0; draw < options.draws; ++draw) {
        // A fixed generator and a Fisher-Yates shuffle of our own: the same draws everywhere.
        std::mt19937_64 rng(static_cast<std::uint64_t>(draw) * 7919 + 17);
        std::vector<std::size_t> order = members;
        for (std::size_t i = order.size() - 1; i > 0; --i)
          std::swap(order[i], order[rng() % (i + 1)]);
        std::vector<SiteRun> picked;
        for (int s = 0; s < options.shots; ++s) picked.push_back(runs[order[s]]);
        const SiteCalibration site = calibrate_site(picked, base, no_support, prior);
        for (std::size_t i = static_cast<std::size_t>(options.shots); i < order.size(); ++i) {
          const SiteRun& r = runs[order[i]];
          const double before = r.predict_s(base);
          const double after = r.predict_s(site.calibration);
          no_shot += std::fabs(before / r.measured_s - 1);
          shot += std::fabs(after / r.measured_s - 1);
          ++counted;
          const est::StepInterval interval = options.shots > 0
                                                 ? family_interval(site.calibration, r.family)
                                                 : family_interval(base, r.family);
          const double ratio = r.measured_s / after;
          g.covered += ratio >= interval.lo && ratio <= interval.hi;
          ++g.predictions;
          half_widths.push_back(half_width(interval));
        }
      }
      std::vector<SiteRun> all;
      for (std::size_t i : members) all.push_back(runs[i]);
      const est::Calibration every = calibrate_site(all, base, no_support, prior).calibration;
      for (const SiteRun& r : all)
        g.floor_mape +=
            std::fabs(r.predict_s(every) / r.measured_s - 1) / static_cast<double>(all.size());
      g.no_shot_mape = no_shot / static_cast<double>(counted);
      g.shot_mape = shot / static_cast<double>(counted);
      std::vector<double> widths(half_widths.end() - static_cast<std::ptrdiff_t>(counted),
                                 half_widths.end());
      std::sort(widths.begin(), widths.end());
      g.median_half_width = sorted_median(widths);
      report.groups.push_back(g);
    }
  }
  for (const ShotsGroup& g : report.groups) {
    report.no_shot_mape += g.no_shot_mape / static_cast<double>(report.groups.size());
    report.shot_mape += g.shot_mape / static_cast<double>(report.groups.size());
    report.floor_mape += g.floor_mape / static_cast<double>(report.groups.size());
    report.predictions += g.predictions;
    report.covered += g.covered;
    report.worse_groups += g.shot_mape > g.no_shot_mape + 0.01;
  }
  std::sort(half_widths.begin(), half_widths.end());
  report.median_half_width = sorted_median(half_widths);
  return report;
}

// The shots protocol on `rows`, each held-out base fitted from `start` on the other sources.
template <class Row>
ShotsReport site_shots_of(const std::vector<Row>& rows, const est::Calibration& start,
                          const ShotsOptions& options) {
  const auto fit = fit_runs(rows);
  est::FitOptions fit_options;
  fit_options.sweeps = options.sweeps;
  return shots_of(
      site_runs(rows),
      [&](const std::string& source) {
        std::vector<typename decltype(fit.samples)::value_type> others;
        for (std::size_t i = 0; i < fit.samples.size(); ++i)
          if (fit.groups[i] != source) others.push_back(fit.samples[i]);
        return est::fit_calibration(others, start, fit_options).calibration;
      },
      options);
}

}  // namespace

ShotsReport site_shots(const std::vector<MeasuredRun>& rows, const est::Calibration& start,
                       const ShotsOptions& options) {
  return site_shots_of(rows, start, options);
}

ShotsReport site_shots(const std::vector<MeasuredDlrmRun>& rows, const est::Calibration& start,
                       const ShotsOptions& options) {
  return site_shots_of(rows, start, options);
}

std::string format_shots(const ShotsReport& report) {
  std::size_t width = 6;
  for (const ShotsGroup& g : report.groups)
    width = std::max(width, g.source.size() + 1 + g.gpu.size());
  std::string out = fmt::format(
      "\nsite calibration on {} run{} of each group held out with its source ({} draws)\n"
      "{:<{}} {:>5} {:>8} {:>8} {:>9} {:>11} {:>8}\n",
      report.shots, report.shots == 1 ? "" : "s", report.draws, "group", width, "runs", "no-shot",
      fmt::format("{}-shot", report.shots), "coverage", "half-width", "all-run");
  for (const ShotsGroup& g : report.groups)
    out += fmt::format(
        "{:<{}} {:>5} {:>7.1f}% {:>7.1f}% {:>8.1f}% {:>10.1f}% {:>7.1f}%\n", g.source + " " + g.gpu,
        width, g.runs, 100 * g.no_shot_mape, 100 * g.shot_mape,
        g.predictions ? 100.0 * static_cast<double>(g.covered) / static_cast<double>(g.predictions)
                      : 0.0,
        100 * g.median_half_width, 100 * g.floor_mape);
  if (report.groups.empty()) return out + "no group has enough runs\n";
  out += fmt::format(
      "{}-shot MAPE {:.1f}% over {} groups (no-shot {:.1f}%, {:.2f}x); {} group{} more than 1 "
      "point worse; coverage {:.1f}% of {} predictions, median half-width {:.1f}%\n"
      "all-run: each group's runs after site calibration on all of them, in sample, {:.1f}% over "
      "the groups: about the least error the site factors leave, whatever K\n",
      report.shots, 100 * report.shot_mape, report.groups.size(), 100 * report.no_shot_mape,
      report.no_shot_mape > 0 ? report.shot_mape / report.no_shot_mape : 0.0, report.worse_groups,
      report.worse_groups == 1 ? "" : "s",
      100.0 * static_cast<double>(report.covered) / static_cast<double>(report.predictions),
      report.predictions, 100 * report.median_half_width, 100 * report.floor_mape);
  return out;
}

}  // namespace clustersweep::spaces
