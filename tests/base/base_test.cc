#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/csv.h"
#include "base/error.h"
#include "base/files.h"
#include "base/format.h"
#include "base/names.h"

namespace clustersweep {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Names, ClosestNamesRankNearMisses) {
  const std::vector<std::string> gpus = {"A100-SXM4-80GB", "B200-180GB", "H100-SXM5-80GB"};
  EXPECT_EQ(closest_names("H100", gpus), (std::vector<std::string>{"H100-SXM5-80GB"}));
  // Every '-'-separated part found: a near miss whatever the length.
  EXPECT_EQ(closest_names("A100-80GB", gpus, 1), (std::vector<std::string>{"A100-SXM4-80GB"}));
  EXPECT_EQ(closest_names("h100-sxm5-80gb", gpus, 1), (std::vector<std::string>{"H100-SXM5-80GB"}));
  EXPECT_TRUE(closest_names("zzzzzzzzzz", gpus).empty());
  EXPECT_EQ(did_you_mean("tpp", {"tp", "pp", "cp"}), "; did you mean 'tp', 'pp' or 'cp'?");
  EXPECT_EQ(did_you_mean("zzzzzzzz", {"tp"}), "");
}

TEST(Files, NoOutputIsAnInputOrAnotherOutput) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("cs-clobber-{}", ::getpid());
  fs::create_directories(dir / "sub");
  const std::string store = (dir / "r.h5").string(), link = (dir / "link.h5").string();
  std::ofstream(store) << "rows";
  fs::create_hard_link(store, link);
  const auto refusal = [&](const std::vector<CommandFile>& outputs) -> std::string {
    try {
      refuse_clobbering({{store, "the store being read"}, {"", "an input not given"}}, outputs);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(refusal({{store, "--csv"}}), "--csv: '" + store +
                                             "' is the store being read; name another file (an "
                                             "output never replaces an input)");
  EXPECT_EQ(refusal({{link, "--csv"}}), "--csv: '" + link + "' is '" + store +
                                            "', the store being read; name another file (an "
                                            "output never replaces an input)");
  const std::string dotted = (dir / "sub" / ".." / "r.h5").string();
  EXPECT_NE(refusal({{dotted, "--svg"}}), "");
  const std::string fresh = (dir / "new.csv").string();
  EXPECT_EQ(refusal({{fresh, "--csv"}, {"", "--json"}, {fresh, "--svg"}}),
            "--svg: '" + fresh + "' is also the file of --csv; give each output its own file");
  EXPECT_EQ(refusal({{(dir / "sub").string(), "--csv"}}),
            "--csv: '" + (dir / "sub").string() + "' is a folder; name a file");
  EXPECT_EQ(refusal({{(dir / "none" / "x.csv").string(), "--csv"}}),
            "--csv: cannot write '" + (dir / "none" / "x.csv").string() + "': the folder '" +
                (dir / "none").string() + "' does not exist");
  EXPECT_EQ(refusal({{(dir / "sub").string(), "-o", true}, {fresh, "--csv"}}), "");
  fs::remove_all(dir);
}

TEST(Files, AtomicWriteReplacesTheFileAndLeavesOthersAlone) {
  const fs::path dir =
      fs::temp_directory_path() / ("clustersweep-base-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / "out.csv";
  // A user's own `out.csv.tmp` is not ours to touch.
  std::ofstream(dir / "out.csv.tmp") << "the user's\n";
  write_file_atomically(path.string(), "one\n", "-o");
  write_file_atomically(path.string(), "two\n", "-o");
  EXPECT_EQ(read(path), "two\n");
  EXPECT_EQ(read(dir / "out.csv.tmp"), "the user's\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 2);
  // An ordinary file's permissions, not mkstemp's 0600.
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IRGRP, 0u);
  // A directory that does not exist: one error naming the flag and the file; nothing left over.
  try {
    write_file_atomically((dir / "missing" / "x.csv").string(), "x", "--csv");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--csv: cannot write " + (dir / "missing" / "x.csv").string() +
                                         ": No such file or directory");
  }
  fs::remove_all(dir);
}

TEST(Csv, SplitAndQuoteRoundTrip) {
  EXPECT_EQ(split_csv_record("a,\"b,c\",\"say \"\"hi\"\"\",\r"),
            (std::vector<std::string>{"a", "b,c", "say \"hi\"", ""}));
  EXPECT_EQ(csv_quote("plain"), "plain");
  EXPECT_EQ(csv_quote("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_quote("say \"hi\""), "\"say \"\"hi\"\"\"");
  const std::vector<std::string> fields = {"x", "1,2", "\"q\"", ""};
  std::vector<std::string> quoted;
  for (const auto& f : fields) quoted.push_back(csv_quote(f));
  EXPECT_EQ(split_csv_record(fmt::format("{}", fmt::join(quoted, ","))), fields);
}

TEST(Format, Numbers) {
  EXPECT_EQ(with_commas(0), "0");
  EXPECT_EQ(with_commas(1234567), "1,234,567");
  EXPECT_EQ(format_number(8), "8");
  EXPECT_EQ(format_number(12.5), "12.5");
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_duration(7.25), "7.25 s");
  EXPECT_EQ(format_duration(41 * 60), "41 min");
  EXPECT_EQ(format_duration(3.2 * 86400), "3.2 days");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1.5e9), "1.5 GB");
  EXPECT_EQ(format_clock(3725), "1:02:05");
}

// Every measured value reads in the unit of its own magnitude, 3 significant digits.
TEST(Format, QuantitiesInReadableUnits) {
  EXPECT_EQ(format_quantity(1.218e7, "s"), "141 days");
  EXPECT_EQ(format_quantity(3.444e7, "s"), "1.09 years");
  EXPECT_EQ(format_quantity(6.69, "s"), "6.69 s");
  EXPECT_EQ(format_quantity(569400, "kWh"), "569 MWh");
  EXPECT_EQ(format_quantity(7.71e6, "kWh"), "7.71 GWh");
  EXPECT_EQ(format_quantity(1.139e6, "USD"), "$1.14M");
  EXPECT_EQ(format_quantity(830, "USD, electricity only"), "$830");
  EXPECT_EQ(format_quantity(3.08e6, "kg"), "3080 t");
  EXPECT_EQ(format_quantity(0.5633, "fraction"), "56.3%");
  EXPECT_EQ(format_quantity(1.712e11, "B"), "171 GB");
  EXPECT_EQ(format_quantity(1.56e6, "h"), "1.56M h");
  EXPECT_EQ(format_quantity(4096, ""), "4096");
  EXPECT_EQ(format_quantity(2.5e7, ""), "25M");
  EXPECT_EQ(format_quantity(200, "Gbit/s"), "200 Gbit/s");
  EXPECT_EQ(format_quantity(std::nan(""), "s"), "nan");
  EXPECT_EQ(display_unit("USD", 2e6).name(), "$M");
  EXPECT_EQ(display_unit("s", 2e7).name(), "days");
  EXPECT_EQ(display_unit("fraction", 0.5).name(), "%");
}

TEST(Format, WrapWordsKeepsTheFirstIndentAndIndentsTheRest) {
  EXPECT_EQ(wrap_words("  a bb ccc dddd", 8, "    "), "  a bb\n    ccc\n    dddd");
  EXPECT_EQ(wrap_words("short", 80, "  "), "short");
  EXPECT_EQ(wrap_words("averyveryverylongword x", 5, " "), "averyveryverylongword\n x");
}

}  // namespace
}  // namespace clustersweep
