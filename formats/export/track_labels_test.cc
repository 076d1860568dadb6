#include "formats/export/track_labels.h"

#include <gtest/gtest.h>

namespace moetrace {
namespace {

TEST(TrackLabels, NamesRanksThreadsAndStreams) {
  Rank r;
  r.rank = 12;
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "python", 100);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 3", 3);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceComm, "Stream 5 (hccl)", 5);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCopy, "stream 6 (copy)", 6);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kUnspecified, "", -1);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceOther, "aicpu", 9);
  EXPECT_EQ(ProcessLabel(r), "rank 12");
  r.host = "node3";
  EXPECT_EQ(ProcessLabel(r), "rank 12 (node3)");
  EXPECT_EQ(TrackLabel(r, 0), "python");
  EXPECT_EQ(TrackLabel(r, 1), "NPU stream 3 (compute)");
  EXPECT_EQ(TrackLabel(r, 2), "NPU stream 5 (comm: hccl)");
  EXPECT_EQ(TrackLabel(r, 3), "NPU stream 6 (copy)");
  EXPECT_EQ(TrackLabel(r, 4), "NPU stream 4");  // no id: its index
  EXPECT_EQ(TrackLabel(r, 5), "NPU stream 9 (other: aicpu)");
  EXPECT_EQ(TrackDisplayId(r, 4), 4);
}

TEST(TrackLabels, CudaSourcesAreGpus) {
  Rank r;
  r.AddTrack(TrackKind::kHostThread, TrackRole::kHostMain, "cuda runtime thread", 1);
  r.AddTrack(TrackKind::kDeviceStream, TrackRole::kDeviceCompute, "stream 7", 7);
  EXPECT_EQ(TrackLabel(r, 1), "GPU stream 7 (compute)");
}

}  // namespace
}  // namespace moetrace
