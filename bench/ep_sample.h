// seed_table's EP figures over whole EP groups. The rows on the share of EP
// communication left unmasked must count every rank of an EP group: under
// skewed routing the ranks holding the hottest experts never wait in an
// all-to-all and the others do, and which EP position is hottest depends on
// EDPB's migration plan, so one rank per stage is a biased sample. Those
// figures need only labels and the migration events of each rank, so the
// sink reduces each rank to them and keeps whole only the few ranks the
// other rows read (host stalls, activation counters).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "formats/trace.h"
#include "formats/trace_io.h"

namespace moetrace::bench {

// EP communication of one step summed over ranks (ns).
struct EpSum {
  double total = 0, exposed = 0;          // comm_by_class.EP labels
  double mig_total = 0, mig_exposed = 0;  // EDPB's ExpertMigration, part of the above
  int ranks = 0;                          // ranks whose labels were added
  // Unmasked share of the MoE layers' EP all-to-alls (migration apart).
  double A2AUnmasked() const { return (exposed - mig_exposed) / (total - mig_total); }
};

// Adds comm_by_class.EP.{total,exposed}_ns of `step` for the ranks in
// `ranks` (sorted); every rank with a total label counts once in out->ranks.
void AddEpLabels(const std::vector<LabeledValue>& labels, int step, const std::vector<int32_t>& ranks, EpSum* out);

// Adds the ExpertMigration events of `step` on `rank`'s device streams:
// their time and the part not overlapped by that rank's compute (each
// compute op's overlap added, capped at the migration's length).
void AddMigration(const Rank& rank, int step, EpSum* out);

// Keeps the ranks in `keep` whole; of every rank, the migration time of
// `step` (Migration()); the labels arrive with the metadata at Finish.
// Memory: the kept ranks and two numbers per rank, not the others' events.
class SampleSink : public TraceSink {
 public:
  SampleSink(std::vector<int32_t> keep, int step) : keep_(std::move(keep)), step_(step) {}
  void AddRank(const Rank& rank) override;
  void Finish(const Metadata& metadata) override { trace_.metadata = metadata; }
  Trace& trace() { return trace_; }  // the kept ranks and every rank's labels
  // Migration time of `step` summed over `ranks` (those received).
  EpSum Migration(const std::vector<int32_t>& ranks) const;

 private:
  std::vector<int32_t> keep_;
  int step_;
  Trace trace_;
  std::map<int32_t, EpSum> migration_;  // by rank: mig_total, mig_exposed
};

}  // namespace moetrace::bench
