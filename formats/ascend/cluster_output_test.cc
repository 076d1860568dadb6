// msprof-analyze's cluster_analysis_output: the real sample folder, a
// synthetic matrix and group file, odd fields counted, bad files reported.
#include "formats/ascend/cluster_output.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "formats/errors.h"
#include "formats/real_traces_dir.h"

namespace moetrace {
namespace {

namespace fs = std::filesystem;

class ClusterFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("moetrace_cluster_output_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cluster_analysis_output");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / "cluster_analysis_output" / name, std::ios::binary) << text;
  }
  std::string Out() const { return (dir_ / "cluster_analysis_output").string(); }
  std::string Error() {
    try {
      ReadClusterOutput(Out());
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path dir_;
};

TEST_F(ClusterFolder, MatrixLinksAndGroups) {
  // Two ops on 0 -> 1 over HCCS, one RDMA link; the group file gives a
  // collective group and a p2p pair.
  Write("cluster_communication_matrix.json", R"J({
    "(0, 1)": {"step": {
      "hcom_allReduce__1_0@9": {
        "0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 10.0, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 20.0},
        "1-0": {"Transport Type": "HCCS", "Transit Size(MB)": 10.0, "Transit Time(ms)": 1.0, "Bandwidth(GB/s)": 10.0}},
      "hcom_allReduce__1_1@9": {
        "0-1": {"Transport Type": "HCCS", "Transit Size(MB)": "6", "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 12.0}}}},
    "(0, 8)": {"step": {"hcom_send__2_0@3": {
        "0-8": {"Transport Type": "RDMA", "Transit Size(MB)": 5.0, "Transit Time(ms)": NaN}}}}})J");
  Write("communication_group.json", R"J({"collective": [[1, 0], [0, 1, 2, 3]], "p2p": [[0, 8]]})J");
  std::string dir;
  ASSERT_TRUE(FindClusterOutputDir(dir_.string(), &dir));  // the profiling root
  EXPECT_EQ(dir, Out());
  ClusterOutputFiles f = ReadClusterOutput(dir);
  ASSERT_EQ(f.matrix_links.size(), 3u);
  const MatrixLink& a = f.matrix_links[0];
  EXPECT_EQ(a.group, "(0, 1)");
  EXPECT_EQ(a.src, 0);
  EXPECT_EQ(a.dst, 1);
  EXPECT_EQ(a.transport, "hccs");
  EXPECT_DOUBLE_EQ(a.size_mb, 16.0);  // "6" coerced
  EXPECT_DOUBLE_EQ(a.time_ms, 1.0);
  EXPECT_EQ(a.ops, 2);
  EXPECT_EQ(f.matrix_links[1].src, 1);
  const MatrixLink& r = f.matrix_links[2];
  EXPECT_EQ(r.group, "(0, 8)");
  EXPECT_EQ(r.transport, "rdma");
  EXPECT_DOUBLE_EQ(r.time_ms, 0.0);  // NaN skipped
  EXPECT_EQ(f.stats["cluster_communication_matrix.coerced_fields"], 1);
  EXPECT_EQ(f.stats["cluster_communication_matrix.skipped_fields"], 1);
  ASSERT_EQ(f.groups.size(), 3u);
  EXPECT_EQ(f.groups[0].name, "(0, 1)");
  EXPECT_EQ(f.groups[0].kind, "collective,communication");
  EXPECT_EQ(f.groups[0].ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(f.groups[1].name, "(0, 1, 2, 3)");
  EXPECT_EQ(f.groups[2].name, "(0, 8)");
  EXPECT_EQ(f.groups[2].kind, "communication,p2p");
}

TEST_F(ClusterFolder, MatrixTotalsAloneWhenGiven) {
  Write("cluster_communication_matrix.json", R"J({"(0, 1)": {"step": {
      "hcom_allReduce__1_0@9": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 1, "Transit Time(ms)": 1}},
      "Total Op Info": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 3, "Transit Time(ms)": 2}}}}})J");
  ClusterOutputFiles f = ReadClusterOutput(Out());
  ASSERT_EQ(f.matrix_links.size(), 1u);
  EXPECT_DOUBLE_EQ(f.matrix_links[0].size_mb, 3);
  EXPECT_DOUBLE_EQ(f.matrix_links[0].time_ms, 2);
}

TEST_F(ClusterFolder, OddCsvFieldsAreCounted) {
  // No Bubble column; a quoted number; NaN; text; a row of an unknown type.
  Write("cluster_step_trace_time.csv",
        "Step,Type,Index,Computing,Free,Stage\n"
        ",rank,0,\"10.5\",NaN,20\n"
        ",rank,1,lots,,21\n"
        ",node,x,1,1,1\n");
  ClusterOutputFiles f = ReadClusterOutput(Out());
  ASSERT_EQ(f.step_trace.size(), 2u);
  EXPECT_EQ(f.step_trace[0].figures_us,
            (std::vector<std::pair<std::string, double>>{{"computing", 10.5}, {"stage", 20}}));
  EXPECT_EQ(f.step_trace[1].figures_us, (std::vector<std::pair<std::string, double>>{{"stage", 21}}));
  EXPECT_EQ(f.stats["cluster_step_trace_time.skipped_fields"], 2);
  EXPECT_EQ(f.stats["cluster_step_trace_time.absent_fields"], 1);
  EXPECT_EQ(f.stats["cluster_step_trace_time.skipped_rows"], 1);
}

TEST_F(ClusterFolder, OddJsonFieldsAreCounted) {
  Write("cluster_communication.json", R"J({"(0, 1)": {"step": {"hcom_x__1_0@2": {
      "0": {"Communication Time Info": {"Elapse Time(ms)": "1.5", "Wait Time(ms)": NaN},
            "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": "2", "Transit Time(ms)": 1.0},
                                             "RDMA": 7}}}}}})J");
  ClusterOutputFiles f = ReadClusterOutput(Out());
  ASSERT_EQ(f.rank_links.size(), 1u);
  const auto& [key, l] = *f.rank_links.begin();
  EXPECT_EQ(key, (LinkKey{"(0, 1)", 0, "hccs"}));
  EXPECT_DOUBLE_EQ(l.size_mb, 2);
  EXPECT_EQ(f.stats["cluster_communication.coerced_fields"], 2);
  EXPECT_EQ(f.stats["cluster_communication.skipped_fields"], 2);  // NaN, RDMA: 7
}

TEST_F(ClusterFolder, UnreadableFilesNameFileAndPosition) {
  const std::string truncated = R"J({"(0, 1)": {"step": {"op": {"0-1": {"Transport Type": "HC)J";
  Write("cluster_communication_matrix.json", truncated);
  std::string e = Error();
  EXPECT_EQ(e.rfind(Out() + "/cluster_communication_matrix.json: byte ", 0), 0u) << e;
  EXPECT_NE(e.find("malformed JSON"), std::string::npos) << e;
  fs::remove(dir_ / "cluster_analysis_output" / "cluster_communication_matrix.json");
  Write("communication_group.json", R"J({"collective": [[0, 1], [2, 3})J");
  e = Error();
  EXPECT_EQ(e.rfind(Out() + "/communication_group.json: byte ", 0), 0u) << e;
  fs::remove(dir_ / "cluster_analysis_output" / "communication_group.json");
  Write("cluster_communication.json", R"J({"(0, 1)": {"step": {"op": {"0": {"Communication Time Info": {)J");
  e = Error();
  EXPECT_EQ(e.rfind(Out() + "/cluster_communication.json: byte ", 0), 0u) << e;
  fs::remove(dir_ / "cluster_analysis_output" / "cluster_communication.json");
  Write("cluster_step_trace_time.csv", "Step,Type,Index,Computing\n,rank,\"0,1\n");
  e = Error();
  EXPECT_EQ(e.rfind(Out() + "/cluster_step_trace_time.csv: line", 0), 0u) << e;
}

TEST(ClusterOutputReal, SampleFolder) {
  const std::string dir = RealTracesRoot() + "/ascend/cluster-output";
  if (!fs::exists(dir)) GTEST_SKIP() << "real trace absent (set MOETRACE_REAL_TRACES): " << dir;
  ClusterOutputFiles f = ReadClusterOutput(dir);
  EXPECT_TRUE(f.stats.empty());
  ASSERT_EQ(f.step_trace.size(), 9u);  // 8 rank rows, 1 stage row
  EXPECT_EQ(f.step_trace[5].rank, 5);
  EXPECT_EQ(f.step_trace[5].figures_us[0], (std::pair<std::string, double>{"computing", 81367.62001562494}));
  EXPECT_EQ(f.step_trace[8].type, "stage");
  EXPECT_EQ(f.step_trace[8].index, "(0, 1, 2, 3, 4, 5, 6, 7)");
  // Group (0, 1), ranks 0 and 1: HCCS, PCIE, SDMA with traffic (RDMA all 0).
  ASSERT_EQ(f.rank_links.size(), 6u);
  const LinkSum& sdma0 = f.rank_links.at({"(0, 1)", 0, "sdma"});
  EXPECT_DOUBLE_EQ(sdma0.size_mb, 0.08531199999999997 + 5.6e-05);
  EXPECT_DOUBLE_EQ(sdma0.time_ms, 0.035169671875 + 0.001129984375);
  EXPECT_EQ(sdma0.ops, 2);
  EXPECT_EQ(f.rank_links.at({"(0, 1)", 0, "pcie"}).ops, 1);  // its second op moved nothing
  ASSERT_EQ(f.groups.size(), 1u);
  EXPECT_EQ(f.groups[0].ranks, (std::vector<int32_t>{0, 1}));
}

}  // namespace
}  // namespace moetrace
