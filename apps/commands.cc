#include "apps/commands.h"

#include <array>

namespace clustersweep::cli {
namespace {

constexpr std::array kCommands = {
    Command{"run", "sweep a spec's space on MPI ranks into one resumable HDF5 store", run},
    Command{"estimate", "estimate one training step (time, memory, energy) of one plan", estimate},
    Command{"best", "the best parallel plans of one model on one cluster, by an exact search",
            best},
    Command{"validate", "predict published training runs (CSV) and report the error", validate},
    Command{"calibrate",
            "a site calibration: move a few factors towards measured runs of your cluster",
            calibrate},
    Command{"bench", "time the estimator on GPT-3 175B plans; prints evaluations_per_second",
            bench},
    Command{"plan",
            "validate a sweep spec; print its axes, point counts and a run-time/store forecast",
            plan},
    Command{"summary", "what a store holds: feasible points, best design per accelerator, spreads",
            summary},
    Command{"pareto",
            "the Pareto-optimal designs of a store in 2 to 4 objectives (table, CSV, SVG)", pareto},
    Command{"top", "the n best designs of a store by one column", top},
    Command{"energy", "re-price a store's designs: kWh, cost, CO2e; deadline and budget questions",
            energy},
    Command{"sensitivity", "how much of the variance of time to train each swept axis explains",
            sensitivity},
    Command{"report",
            "one self-contained HTML page: summary, Pareto plots, best designs, sensitivity",
            report},
    Command{"export",
            "a store's rows as CSV, JSON Lines or netCDF-4, labels as text, with priced columns",
            export_store},
    Command{"catalog", "the built-in models and accelerators, as a table or JSON", catalog},
    Command{"submit", "run a sweep as Slurm batch job(s) that checkpoint, requeue and resume",
            submit},
    Command{"merge", "join the shard stores of a sharded sweep into one store", merge},
    Command{"status", "progress of a sweep's store and the state of its Slurm jobs", status},
};

}  // namespace

std::span<const Command> commands() noexcept { return kCommands; }

}  // namespace clustersweep::cli
