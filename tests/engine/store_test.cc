// The store writer and reader, serially: a hand-made schema, round trips, progress, and the
// reader's errors (whose text analysis and users see).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "base/error.h"
#include "engine/h5.h"
#include "engine/row_writer.h"
#include "engine/run.h"
#include "engine/store_format.h"
#include "engine/store_reader.h"
#include "engine/store_writer.h"
#include "test_support.h"

namespace clustersweep::engine {
namespace {

using test::TempDir;

StoreHeader tiny_header(std::uint64_t rows) {
  StoreHeader h;
  h.schema.columns = {
      {"point_id", "", "id", ColumnType::u64, {}},
      {"gpu", "", "design_axis", ColumnType::label, {"A100", "H100"}},
      {"tp", "", "plan_axis", ColumnType::i32, {}},
      {"feasible", "", "metric", ColumnType::boolean, {}},
      {"step_time_s", "s", "metric", ColumnType::f64, {}},
  };
  h.rows = rows;
  spaces::Axis gpu;
  gpu.name = "gpu";
  gpu.is_label = true;
  gpu.labels = {"A100", "H100"};
  h.axes = {gpu};
  h.spec = "spec text";
  h.spec_hash = "0123456789abcdef";
  h.keep = "all";
  h.objective = "step_time";
  h.chunks = 3;
  h.training_tokens = 1e12;
  h.pricing.pue = 1.5;
  return h;
}

RowBlock tiny_rows(const Schema& schema, std::size_t n, std::uint64_t first_id) {
  RowBlock b(schema);
  b.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    b.column<std::uint64_t>(0)[i] = first_id + i;
    b.column<std::uint16_t>(1)[i] = static_cast<std::uint16_t>(i % 2);
    b.column<std::int32_t>(2)[i] = static_cast<std::int32_t>(1 << (i % 4));
    b.column<std::uint8_t>(3)[i] = i % 3 != 0;
    b.column<double>(4)[i] = i % 3 != 0 ? 0.5 * static_cast<double>(i) : NAN;
  }
  return b;
}

TEST(Store, WritesAndReadsBackEveryType) {
  TempDir dir;
  const std::string path = dir / "s.h5";
  const StoreHeader header = tiny_header(10);
  create_store(path, header);
  {
    StoreWriter w = StoreWriter::open(path);
    EXPECT_EQ(w.rows(), 10u);
    const RowBlock rows = tiny_rows(header.schema, 10, 100);
    w.write(0, rows, 0, 4);
    w.write(4, rows, 4, 6);
    w.write_progress(0, {1}, {10});
    w.close();
  }
  finalize_store(path, RunStats{2, 1.5, 1000, 10, 0, false});
  const StoreReader r(path);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.rows(), 10u);
  ASSERT_EQ(r.columns().size(), 5u);
  EXPECT_EQ(r.columns()[1].name, "gpu");
  EXPECT_TRUE(r.columns()[1].is_label);
  EXPECT_EQ(r.columns()[1].labels, (std::vector<std::string>{"A100", "H100"}));
  EXPECT_EQ(r.columns()[1].role, "design_axis");
  EXPECT_EQ(r.find_column("step_time_s")->unit, "s");
  EXPECT_EQ(r.find_column("nope"), nullptr);
  std::vector<double> v;
  r.read("tp", 2, 3, v);
  EXPECT_EQ(v, (std::vector<double>{4, 8, 1}));
  r.read("gpu", 0, 3, v);
  EXPECT_EQ(v, (std::vector<double>{0, 1, 0}));
  r.read("feasible", 0, 4, v);
  EXPECT_EQ(v, (std::vector<double>{0, 1, 1, 0}));
  r.read("point_id", 9, 1, v);
  EXPECT_EQ(v, (std::vector<double>{109}));
  r.read("step_time_s", 0, 2, v);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0.5);
  EXPECT_EQ(r.string_attribute("spec"), "spec text");
  EXPECT_EQ(r.number_attribute("pue"), 1.5);
  EXPECT_EQ(r.number_attribute("mpi_size"), 2);
  EXPECT_EQ(r.number_attribute("format_version"), kStoreFormatVersion);
  EXPECT_EQ(r.string_attribute("pue"), std::nullopt);
  EXPECT_EQ(r.number_attribute("missing"), std::nullopt);
  RowBlock all;
  r.read_rows(0, 10, all);
  EXPECT_EQ(all.rows(), 10u);
  EXPECT_EQ(all.column<std::uint64_t>(0)[3], 103u);
  const Progress p = read_progress(path);
  EXPECT_EQ(p.done, (std::vector<std::uint8_t>{1, 0, 0}));
  EXPECT_EQ(p.rows, (std::vector<std::uint64_t>{10, 0, 0}));
}

// The natural-width types of format version 3: they round-trip through the file (types and
// values), and StoreReader::read converts each to doubles.
TEST(Store, WritesAndReadsBackNarrowTypes) {
  TempDir dir;
  const std::string path = dir / "n.h5";
  StoreHeader h = tiny_header(3);
  h.schema.columns = {
      {"point_id", "", "id", ColumnType::u64, {}},
      {"design_id", "", "id", ColumnType::u32, {}},
      {"seq_len", "", "design_axis", ColumnType::u16, {}},
      {"pp", "", "plan_axis", ColumnType::u8, {}},
      {"gpu", "", "design_axis", ColumnType::label8, {"A100", "H100", "B200"}},
      {"time_compute_s", "s", "metric", ColumnType::f32, {}},
  };
  create_store(path, h);
  RowBlock b(h.schema);
  b.resize(3);
  for (std::size_t i = 0; i < 3; ++i) {
    b.column<std::uint64_t>(0)[i] = i;
    b.column<std::uint32_t>(1)[i] = 4000000000u + static_cast<std::uint32_t>(i);
    b.column<std::uint16_t>(2)[i] = static_cast<std::uint16_t>(65535 - i);
    b.column<std::uint8_t>(3)[i] = static_cast<std::uint8_t>(255 - i);
    b.column<std::uint8_t>(4)[i] = static_cast<std::uint8_t>(2 - i);
    b.column<float>(5)[i] = 0.25f * static_cast<float>(i);
  }
  {
    StoreWriter w = StoreWriter::open(path);
    w.write(0, b, 0, 3);
    w.write_progress(0, {1}, {3});
    w.close();
  }
  finalize_store(path, RunStats{});
  const StoreReader r(path);
  std::vector<ColumnType> types;
  for (const auto& c : format::read_schema(h5::File::open(path, false).get(), path).columns)
    types.push_back(c.type);
  EXPECT_EQ(types, (std::vector<ColumnType>{ColumnType::u64, ColumnType::u32, ColumnType::u16,
                                            ColumnType::u8, ColumnType::label8, ColumnType::f32}));
  EXPECT_EQ(r.columns()[4].labels, (std::vector<std::string>{"A100", "H100", "B200"}));
  EXPECT_TRUE(r.columns()[4].is_label);
  std::vector<double> v;
  r.read("design_id", 0, 3, v);
  EXPECT_EQ(v, (std::vector<double>{4e9, 4e9 + 1, 4e9 + 2}));
  r.read("seq_len", 0, 3, v);
  EXPECT_EQ(v, (std::vector<double>{65535, 65534, 65533}));
  r.read("pp", 0, 3, v);
  EXPECT_EQ(v, (std::vector<double>{255, 254, 253}));
  r.read("gpu", 0, 3, v);
  EXPECT_EQ(v, (std::vector<double>{2, 1, 0}));
  r.read("time_compute_s", 0, 3, v);
  EXPECT_EQ(v, (std::vector<double>{0, 0.25, 0.5}));
  RowBlock back;
  r.read_rows(0, 3, back);
  for (std::size_t c = 0; c < back.columns(); ++c)
    EXPECT_EQ(std::memcmp(back.raw(c), b.raw(c), 3 * element_size(back.type(c))), 0) << c;
}

// A column with one value in every row is its dataset's fill value: the writers write none of its
// rows (a block's own values for it are ignored), the file has no storage for it, and every reader
// (schema, columns, row blocks) sees the value in every row.
TEST(Store, AConstantColumnIsItsFillValueWithNoStorage) {
  TempDir dir;
  const std::string path = dir / "c.h5";
  StoreHeader h = tiny_header(4);
  h.schema.columns = {
      {"point_id", "", "id", ColumnType::u64, {}},
      {"seq_len", "", "design_axis", ColumnType::u16, {}, 8192.0},
      {"gpu", "", "design_axis", ColumnType::label8, {"A100", "H100", "B200"}, 2.0},
      {"tp", "", "plan_axis", ColumnType::u8, {}},
  };
  create_store(path, h);
  RowBlock b(h.schema);
  b.resize(4);
  // A block holds a constant column's value from the start.
  EXPECT_EQ(b.number(1, 3), 8192);
  EXPECT_EQ(b.number(2, 0), 2);
  for (std::size_t i = 0; i < 4; ++i) {
    b.column<std::uint64_t>(0)[i] = i;
    b.column<std::uint16_t>(1)[i] = 7;  // not written: the column is its fill value
    b.column<std::uint8_t>(3)[i] = static_cast<std::uint8_t>(1 << i);
  }
  {
    StoreWriter w = StoreWriter::open(path);
    w.write(0, b, 0, 2);
    w.write_progress(0, {1}, {2});
    w.close();
  }
  // The run's own writer, for the other rows.
  {
    const RowLayout layout = read_row_layout(path);
    EXPECT_EQ(layout.element_size, (std::vector<std::size_t>{8, 0, 0, 1}));
    RowWriter w(path, layout, h.schema);
    RowBlock rest(h.schema);
    rest.append(b, 2);
    rest.append(b, 3);
    w.submit(0, 2, rest);
    w.finish();
  }
  finalize_store(path, RunStats{});
  {
    const h5::File file = h5::File::open(path, false);
    const Schema schema = format::read_schema(file.get(), path);
    EXPECT_EQ(schema.columns[0].constant, std::nullopt);
    EXPECT_EQ(schema.columns[1].constant, 8192.0);
    EXPECT_EQ(schema.columns[2].constant, 2.0);
    EXPECT_EQ(schema.columns[3].constant, std::nullopt);
    for (const char* name : {"seq_len", "gpu"}) {
      const h5::Id d = h5::open_dataset(file.get(), name, path);
      EXPECT_EQ(H5Dget_storage_size(d.get()), 0u) << name;
    }
  }
  const StoreReader r(path);
  std::vector<double> v;
  r.read("seq_len", 0, 4, v);
  EXPECT_EQ(v, (std::vector<double>{8192, 8192, 8192, 8192}));
  r.read("gpu", 0, 4, v);
  EXPECT_EQ(v, (std::vector<double>{2, 2, 2, 2}));
  r.read("tp", 0, 4, v);
  EXPECT_EQ(v, (std::vector<double>{1, 2, 4, 8}));
  RowBlock back;
  r.read_rows(0, 4, back);
  EXPECT_EQ(back.number(1, 2), 8192);
  EXPECT_EQ(back.number(2, 3), 2);
}

// The run's writer: chunks handed over while the one before is being written land in their rows,
// each marked done after them; a compressed store is no place for it.
TEST(RowWriter, WritesEachChunkBehindTheNextAndMarksItDone) {
  TempDir dir;
  const std::string path = dir / "s.h5";
  const StoreHeader header = tiny_header(10);
  create_store(path, header);
  {
    RowWriter writer(path, read_row_layout(path), header.schema);
    RowBlock block = tiny_rows(header.schema, 4, 106);
    writer.submit(2, 6, block);
    EXPECT_EQ(block.rows(), 0u);  // the writer's empty block back, to fill
    block = tiny_rows(header.schema, 6, 100);
    writer.submit(0, 0, block);
    const Progress before = read_progress(path);
    EXPECT_EQ(before.done[1], 0);
    block = RowBlock(header.schema);  // a chunk that keeps no row
    writer.submit(1, 6, block);
    writer.finish();
  }
  const Progress p = read_progress(path);
  EXPECT_EQ(p.done, (std::vector<std::uint8_t>{1, 1, 1}));
  EXPECT_EQ(p.rows, (std::vector<std::uint64_t>{6, 0, 4}));
  finalize_store(path, RunStats{});
  RowBlock all;
  StoreReader(path).read_rows(0, 10, all);
  const RowBlock first = tiny_rows(header.schema, 6, 100), last = tiny_rows(header.schema, 4, 106);
  for (std::size_t c = 0; c < all.columns(); ++c)
    for (std::size_t r = 0; r < 10; ++r) {
      const double a = all.number(c, r), b = r < 6 ? first.number(c, r) : last.number(c, r - 6);
      EXPECT_TRUE(a == b || (a != a && b != b)) << c << " " << r;
    }

  StoreHeader compressed = tiny_header(10);
  compressed.compression = "fast";
  create_store(dir / "c.h5", compressed);
  try {
    read_row_layout(dir / "c.h5");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir / "c.h5" +
                                         ": 'point_id' is not a contiguous, allocated dataset; a "
                                         "run writes only into a store it created");
  }
}

TEST(Schema, NarrowestTypeHoldsEveryValue) {
  EXPECT_EQ(narrowest_type({0, 1, 255}), ColumnType::u8);
  EXPECT_EQ(narrowest_type({256}), ColumnType::u16);
  EXPECT_EQ(narrowest_type({65536}), ColumnType::u32);
  EXPECT_EQ(narrowest_type({-1, 8}), ColumnType::i32);
  EXPECT_EQ(narrowest_type({12.5}), ColumnType::f64);
  EXPECT_EQ(narrowest_type({5e9}), ColumnType::f64);
  EXPECT_EQ(label_type(256), ColumnType::label8);
  EXPECT_EQ(label_type(257), ColumnType::label);
}

TEST(Schema, OutputColumnsKeepTheSummaryOrTheListAndNameABadName) {
  const auto names = [](const Schema& schema) {
    std::vector<std::string> out;
    for (const auto& c : schema.columns) out.push_back(c.name);
    return out;
  };
  // keep = "all" keeps the summary by default.
  const spaces::Space summary =
      spaces::Space::parse(test::small_spec("all", "time_to_train", "[2, 4]", "", ""), "s.toml");
  const Schema s = make_schema(summary);
  std::vector<std::string> want = {"point_id", "design_id"};
  for (const auto& axis : summary.axes()) want.push_back(axis.name);
  for (const char* n :
       {"dp", "feasible", "infeasible_reason", "num_gpus", "step_time_s", "time_to_train_s",
        "tokens_per_s", "mfu", "mem_per_gpu_bytes", "energy_to_train_j", "network_capex_usd"})
    want.push_back(n);
  EXPECT_EQ(names(s), want);
  EXPECT_EQ(s.columns[s.index("point_id")].type, ColumnType::u32);  // 55,296 points
  EXPECT_EQ(s.columns[s.index("mfu")].type, ColumnType::f32);
  EXPECT_EQ(s.columns[s.index("step_time_s")].type, ColumnType::f64);
  EXPECT_EQ(s.omitted.size() + s.columns.size(), full_schema(summary).columns.size());
  EXPECT_EQ(s.omitted.front(), "time_to_train_failure_free_s");
  // A list keeps the ids and feasibility too, in schema order.
  const spaces::Space listed = spaces::Space::parse(
      test::small_spec("all", "time_to_train", "[2, 4]", "", "columns = [\"mfu\", \"tp\"]\n"),
      "s.toml");
  EXPECT_EQ(names(make_schema(listed)),
            (std::vector<std::string>{"point_id", "design_id", "tp", "feasible", "mfu"}));
  const spaces::Space bad =
      spaces::Space::parse(test::small_spec("all", "time_to_train", "[2, 4]", "",
                                            "columns = [\"tp\", \"step_tim_s\"]\n"),
                           "s.toml");
  try {
    make_schema(bad);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.toml:24:18: output.columns: 'step_tim_s' is no column of this transformer store; "
              "did you mean 'step_time_s'?");
  }
}

TEST(Store, ReadErrorsNameTheColumnAndRange) {
  TempDir dir;
  const std::string path = dir / "s.h5";
  create_store(path, tiny_header(4));
  finalize_store(path, RunStats{});
  const StoreReader r(path);
  std::vector<double> v;
  try {
    r.read("step_time", 0, 1, v);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "unknown column 'step_time'; columns are: point_id, gpu, tp, feasible, step_time_s");
  }
  EXPECT_THROW(r.read("tp", 3, 2, v), Error);
}

TEST(Store, WriterRefusesRowsOutsideTheStore) {
  TempDir dir;
  const std::string path = dir / "s.h5";
  const StoreHeader header = tiny_header(4);
  create_store(path, header);
  StoreWriter w = StoreWriter::open(path);
  const RowBlock rows = tiny_rows(header.schema, 5, 0);
  EXPECT_THROW(w.write(0, rows, 0, 5), Error);
  EXPECT_THROW(w.write_progress(3, {1}, {1}), Error);
}

std::string open_error(const std::string& path) {
  try {
    StoreReader r(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(opened)";
}

TEST(StoreReader, ClearErrorsForFilesThatAreNotStores) {
  TempDir dir;
  EXPECT_EQ(open_error(dir / "missing.h5"),
            "cannot open store '" + (dir / "missing.h5") + "': no such file");
  test::write_file(dir / "text.h5", "hello");
  EXPECT_EQ(
      open_error(dir / "text.h5"),
      "'" + (dir / "text.h5") + "' is not an HDF5 file (expected a clustersweep results store)");
  {
    h5::File f = h5::File::create(dir / "other.h5");
    f.close();
  }
  EXPECT_EQ(open_error(dir / "other.h5"),
            "'" + (dir / "other.h5") +
                "' is an HDF5 file but not a clustersweep results store (no "
                "'format' attribute \"clustersweep-store\")");
  create_store(dir / "v13.h5", tiny_header(1));
  {
    h5::File f = h5::File::open(dir / "v13.h5", true);
    h5::write_attribute(f.get(), "format_version", std::int64_t{13}, "test");
    f.close();
  }
  EXPECT_EQ(open_error(dir / "v13.h5"),
            "'" + (dir / "v13.h5") +
                "' has store format version 13; this clustersweep reads "
                "versions 3 to 12 (use the clustersweep that "
                "wrote it, or rerun the sweep)");
  test::write_file(dir / "run.h5.partial", "");
  EXPECT_EQ(open_error(dir / "run.h5"),
            "cannot open store '" + (dir / "run.h5") + "': no such file (an unfinished run left '" +
                (dir / "run.h5") + ".partial'; finish it with 'clustersweep run SPEC -o " +
                (dir / "run.h5") + " --resume')");
}

TEST(StoreReader, RefusesAStagingFile) {
  TempDir dir;
  StoreHeader h = tiny_header(3);
  h.staging = true;
  create_store(dir / "x.h5.partial", h);
  EXPECT_EQ(open_error(dir / "x.h5.partial"), "'" + (dir / "x.h5.partial") +
                                                  "' is the staging file of an unfinished run; "
                                                  "finish it with 'clustersweep run SPEC -o " +
                                                  (dir / "x.h5") + " --resume'");
}

TEST(StoreReader, AnUnfinishedStoreShowsItsLeadingDoneChunks) {
  TempDir dir;
  StoreHeader h = tiny_header(10);
  h.design_begin = 0;
  h.design_end = 10;
  h.plan_points = 1;
  h.designs_per_chunk = 4;  // chunks of 4, 4 and 2 rows
  const std::string path = dir / "x.h5.partial";
  create_store(path, h);
  StoreWriter w = StoreWriter::open(path);
  w.write_progress(1, {1}, {4});
  w.close();
  EXPECT_EQ(StoreReader(path).rows(), 0u);
  w = StoreWriter::open(path);
  w.write_progress(0, {1}, {4});
  w.close();
  const StoreReader r(path);
  EXPECT_FALSE(r.complete());
  EXPECT_EQ(r.rows(), 8u);
}

// A finished store of `rows` rows at `path`, every row written.
void finished_store(const std::string& path, std::uint64_t rows) {
  const StoreHeader header = tiny_header(rows);
  create_store(path, header);
  StoreWriter w = StoreWriter::open(path);
  w.write(0, tiny_rows(header.schema, rows, 0), 0, rows);
  w.close();
  finalize_store(path, RunStats{});
}

std::string damaged_message(const std::string& path, const std::string& why) {
  return "'" + path + "' is not a complete clustersweep store (" + why +
         "); copy it again, or rerun its sweep with --force";
}

// Replaces `bytes` bytes of `path` at `offset`.
void patch(const std::string& path, std::size_t offset, const std::string& bytes) {
  std::string data = test::read_file(path);
  ASSERT_LE(offset + bytes.size(), data.size());
  data.replace(offset, bytes.size(), bytes);
  std::ofstream(path, std::ios::binary) << data;
}

TEST(StoreReader, ACutShortStoreSaysHowMuchOfItIsThere) {
  TempDir dir;
  finished_store(dir / "s.h5", 1000);
  const std::string whole = test::read_file(dir / "s.h5");
  for (std::size_t size : {1000, 50}) {
    test::write_file(dir / "cut.h5", whole.substr(0, size));
    EXPECT_EQ(
        open_error(dir / "cut.h5"),
        damaged_message(dir / "cut.h5", "the file is truncated: " + std::to_string(size) + " of " +
                                            std::to_string(whole.size()) + " bytes"));
  }
  // Cut inside the signature HDF5 looks for, and cut to nothing.
  test::write_file(dir / "cut.h5", whole.substr(0, 4));
  EXPECT_EQ(open_error(dir / "cut.h5"),
            damaged_message(dir / "cut.h5", "the file is truncated: only 4 bytes"));
  test::write_file(dir / "cut.h5", "");
  EXPECT_EQ(open_error(dir / "cut.h5"), damaged_message(dir / "cut.h5", "the file is empty"));
  // The same message on every way into a store.
  test::write_file(dir / "cut.h5", whole.substr(0, 1000));
  const std::string cut = damaged_message(
      dir / "cut.h5", "the file is truncated: 1000 of " + std::to_string(whole.size()) + " bytes");
  for (const auto& open : std::vector<std::function<void()>>{
           [&] { read_progress(dir / "cut.h5"); },
           [&] { StoreWriter::open(dir / "cut.h5"); },
           [&] { finalize_store(dir / "cut.h5", RunStats{}); },
           [&] { store_state(dir / "cut.h5"); },
       }) {
    try {
      open();
      ADD_FAILURE() << "opened";
    } catch (const InputError& e) {
      EXPECT_EQ(e.what(), cut);
    }
  }
}

TEST(StoreReader, AnEditedStoreNamesTheColumn) {
  TempDir dir;
  const auto edit = [&](const std::string& name, const std::function<void(hid_t)>& change) {
    const std::string path = dir / name;
    finished_store(path, 4);
    h5::File f = h5::File::open(path, true);
    change(f.get());
    f.close();
    return path;
  };
  const auto replace = [](hid_t file, const char* column, hid_t type, std::uint64_t rows) {
    ASSERT_GE(H5Ldelete(file, column, H5P_DEFAULT), 0);
    h5::create_dataset(file, column, type, rows, "test");
  };
  std::string path = edit("missing.h5", [](hid_t f) { H5Ldelete(f, "tp", H5P_DEFAULT); });
  EXPECT_EQ(open_error(path), damaged_message(path, "column 'tp' is missing"));
  path = edit("short.h5", [&](hid_t f) { replace(f, "tp", H5T_STD_I32LE, 3); });
  EXPECT_EQ(open_error(path), damaged_message(path, "column 'tp' has 3 rows, the store 4"));
  path = edit("int.h5", [&](hid_t f) { replace(f, "step_time_s", H5T_STD_I32LE, 4); });
  EXPECT_EQ(open_error(path),
            damaged_message(path, "column 'step_time_s' holds int32, not float64"));
  path = edit("signed.h5", [&](hid_t f) { replace(f, "point_id", H5T_STD_I64LE, 4); });
  EXPECT_EQ(open_error(path),
            damaged_message(path, "column 'point_id' is of no store type: it holds int64"));
  path = edit("text.h5", [&](hid_t f) {
    h5::Id text = h5::datatype(H5Tcopy(H5T_C_S1), "test");
    H5Tset_size(text.get(), 8);
    replace(f, "tp", text.get(), 4);
  });
  EXPECT_EQ(open_error(path),
            damaged_message(path, "column 'tp' is of no store type: it holds text"));
  path = edit("progress.h5", [](hid_t f) { H5Ldelete(f, "progress/chunk_done", H5P_DEFAULT); });
  EXPECT_EQ(open_error(path),
            damaged_message(path, "its progress marks '/progress/chunk_done' are missing"));
  path = edit("columns.h5", [](hid_t f) { H5Adelete(f, "columns"); });
  EXPECT_EQ(open_error(path),
            damaged_message(path, "its root attribute 'columns' is missing or unreadable"));
}

TEST(StoreReader, ALabelCodeBeyondItsLabelsIsDamage) {
  TempDir dir;
  const std::string path = dir / "s.h5";
  finished_store(path, 4);
  {
    h5::File f = h5::File::open(path, true);
    // Raw codes in the columns' own (enum) types, as a flipped bit would leave them.
    const std::uint16_t code = 7;
    h5::Id gpu = h5::open_dataset(f.get(), "gpu", path);
    h5::Id gpu_type = h5::datatype(H5Dget_type(gpu.get()), path);
    h5::write(gpu.get(), gpu_type.get(), 2, 1, &code, path);
    const std::uint8_t flag = 9;
    h5::Id feasible = h5::open_dataset(f.get(), "feasible", path);
    h5::Id feasible_type = h5::datatype(H5Dget_type(feasible.get()), path);
    h5::write(feasible.get(), feasible_type.get(), 3, 1, &flag, path);
  }
  const StoreReader r(path);  // only the rows tell
  const std::string gpu = damaged_message(
      path, "the file is damaged: column 'gpu' holds the code 7 at row 2, beyond its 2 labels");
  std::vector<double> v;
  RowBlock rows;
  try {
    r.read("gpu", 0, 4, v);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.what(), gpu);
  }
  try {
    r.read_rows(0, 4, rows);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.what(), gpu);
  }
  try {
    r.read("feasible", 0, 4, v);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.what(),
              damaged_message(path,
                              "the file is damaged: column 'feasible' holds the code 9 at "
                              "row 3, beyond its 2 values"));
  }
  r.read("gpu", 0, 2, v);  // the rows before the damage read
  EXPECT_EQ(v, (std::vector<double>{0, 1}));
}

// The byte offset of the size of the first object in the first global heap collection of an HDF5
// file (where variable-length strings live, with no checksum in the 1.8-compatible format):
// "GCOL", version, 3 reserved bytes, the collection size (8), then the first object's index (2),
// reference count (2), 4 reserved bytes and its size (8).
std::size_t first_heap_object_size(const std::string& path) {
  const std::string data = test::read_file(path);
  const auto at = data.find("GCOL");
  return at == std::string::npos ? 0 : at + 16 + 8;
}

TEST(StoreReader, MetadataThatBreaksHdf5IsDamageAndThisProcessSurvives) {
  TempDir dir;
  const std::string path = dir / "s.h5";
  finished_store(path, 4);
  const std::size_t size = first_heap_object_size(path);
  ASSERT_GT(size, 0u);
  // HDF5 1.10 trusts this size: reading the strings runs past the collection (a crash or a loop).
  patch(path, size, std::string("\xff\xff\xff\x7f\0\0\0\0", 8));
  const std::string message = open_error(path);
  EXPECT_EQ(message.rfind("'" + path +
                              "' is not a complete clustersweep store (the file is "
                              "damaged: HDF5 ",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("); copy it again, or rerun its sweep with --force"), std::string::npos)
      << message;
}

TEST(H5, FailuresAreToldInTheSystemsWords) {
  TempDir dir;
  const std::string path = dir / "no/such/folder/x.h5";
  try {
    h5::File::create(path);
    FAIL();
  } catch (const h5::Failed& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot create the file: No such file or directory");
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_EQ(e.failure().os_error, ENOENT);
  }
  test::write_file(dir / "text.h5", "not hdf5");
  try {
    h5::File::open(dir / "text.h5", false);
    FAIL();
  } catch (const h5::Failed& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "text.h5") + ": cannot open the file: not an HDF5 file");
    EXPECT_EQ(e.exit_code(), kExitFailure);
  }
  EXPECT_EQ(h5::printable("a\nb\x01"
                          "c\xff\xc3\xa9"),
            "a b c?\xc3\xa9");
}

// A store whose creation fails (here: beyond the process's file size limit, as a full disk or a
// file system's largest file would) leaves no file, says why in the system's words, and the
// process still ends cleanly although HDF5 could not close the file.
TEST(Store, AFailedCreationLeavesNothingAndExitsCleanly) {
  TempDir dir;
  const std::string path = dir / "s.h5";
  const pid_t child = fork();
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64 << 10, 64 << 10};
    setrlimit(RLIMIT_FSIZE, &limit);
    StoreHeader h = tiny_header(1 << 20);
    h.staging = true;  // sparse: only HDF5's own writes meet the limit
    int code = 10;
    try {
      create_store(path, h);
    } catch (const h5::Failed& e) {
      code = std::string(e.what()).find("File too large") == std::string::npos ? 11
             : std::filesystem::exists(path)                                   ? 12
                                                                               : 0;
    } catch (...) {
      code = 13;
    }
    std::exit(code);  // runs the exit handlers: HDF5 must not shut down on the file it lost
  }
  EXPECT_EQ(test::wait_for(child), 0);
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace clustersweep::engine
