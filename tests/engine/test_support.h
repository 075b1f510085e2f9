#pragma once
// Helpers for the engine tests: small specs, temporary directories, running the real binary
// (optionally under mpiexec), and comparing stores.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/store_reader.h"

namespace clustersweep::test {

// The tests compare every column unless they say otherwise: `output` ends the [output] table.
inline const std::string kAllColumns = "columns = \"all\"\n";

// A small space: 8 designs x 3456 plans of Llama 3 8B. `nodes` widens it.
inline std::string small_spec(const std::string& keep = "all",
                              const std::string& objective = "time_to_train",
                              const std::string& nodes = "[2, 4]",
                              const std::string& extra_cluster = "",
                              const std::string& output = kAllColumns) {
  return "description = \"engine test space\"\n"
         "[workload]\nmodel = \"llama3-8b\"\nprecision = \"bf16\"\ntraining_tokens = 15e12\n"
         "[cluster]\ngpu = [\"A100-SXM4-80GB\", \"H100-SXM5-80GB\"]\nnodes = " +
         nodes +
         "\n"
         "inter_node_gbps_per_gpu = [200, 400]\n" +
         extra_cluster +
         "[plan]\ntp = \"all\"\npp = \"all\"\ncp = [1, 2]\nvp = [1, 2]\nmicro_batch = "
         "\"pow2:1..4\"\n"
         "zero = [0, 1]\nrecompute = \"all\"\nsequence_parallel = \"all\"\n"
         "[pricing]\ngpu_hour_usd = 2.5\n"
         "[output]\nkeep = \"" +
         keep + "\"\nobjective = \"" + objective + "\"\n" + output;
}

// A small recommendation-model space: two models, two accelerators, two sizes and network speeds,
// every sharding (and the planner's best).
inline std::string small_dlrm_spec(const std::string& keep = "all",
                                   const std::string& objective = "time_to_train",
                                   const std::string& output = kAllColumns) {
  return "description = \"engine test space, DLRM\"\n"
         "[workload]\nfamily = \"dlrm\"\nmodel = [\"dlrm-criteo-small\", \"dlrmv2-dcnv2\"]\n"
         "precision = [\"fp32\", \"fp16\"]\ntraining_samples = 4e9\n"
         "[cluster]\ngpu = [\"A100-SXM4-40GB\", \"H100-SXM5-80GB\"]\ngpus = [1, 8, 16]\n"
         "inter_node_gbps_per_gpu = [100, 400]\n"
         "[plan]\nsharding = \"all\"\n"
         "[pricing]\ngpu_hour_usd = 2.5\n"
         "[output]\nkeep = \"" +
         keep + "\"\nobjective = \"" + objective + "\"\n" + output;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "clustersweep-engine-XXXXXX").string();
    if (!mkdtemp(pattern.data())) std::abort();
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }
  // Writes `text` to the file `name` in the folder; its path.
  std::string file(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Starts argv with stdout and stderr going to `log`.
inline pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so a test can signal the whole run
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// The exit code, or 128 + the signal that ended the process.
inline int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Runs argv to the end; `output` gets its stdout and stderr.
inline int run(const std::vector<std::string>& argv, std::string* output = nullptr) {
  char log[] = "/tmp/clustersweep-engine-log-XXXXXX";
  const int fd = mkstemp(log);
  close(fd);
  const int code = wait_for(spawn(argv, log));
  if (output) *output = read_file(log);
  unlink(log);
  return code;
}

// `clustersweep ARGS...` on `ranks` MPI ranks (1: a plain process, no mpiexec).
inline std::vector<std::string> command(int ranks, std::vector<std::string> args) {
  std::vector<std::string> argv;
  if (ranks > 1) argv = {"mpiexec", "-n", std::to_string(ranks), "--oversubscribe"};
  argv.push_back(CLUSTERSWEEP_BINARY);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// The processes whose parent is `parent`.
inline std::vector<pid_t> children(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(line.substr(close_paren + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(std::stoi(name));
  }
  return out;
}

// Empty when both stores hold the same columns with bit-identical values; else what differs.
inline std::string compare_stores(const std::string& a_path, const std::string& b_path) {
  const engine::StoreReader a(a_path), b(b_path);
  if (a.rows() != b.rows())
    return "rows " + std::to_string(a.rows()) + " vs " + std::to_string(b.rows());
  if (a.columns().size() != b.columns().size()) return "column count differs";
  engine::RowBlock x, y;
  const std::uint64_t step = 1 << 16;
  for (std::uint64_t offset = 0; offset < a.rows(); offset += step) {
    const std::uint64_t n = std::min(step, a.rows() - offset);
    a.read_rows(offset, n, x);
    b.read_rows(offset, n, y);
    for (std::size_t c = 0; c < x.columns(); ++c) {
      if (a.columns()[c].name != b.columns()[c].name) return "column names differ";
      const std::size_t bytes = n * engine::element_size(x.type(c));
      if (std::memcmp(x.raw(c), y.raw(c), bytes) != 0)
        return "column '" + a.columns()[c].name + "' differs in rows from " +
               std::to_string(offset);
    }
  }
  return "";
}

}  // namespace clustersweep::test
