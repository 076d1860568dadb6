// seed_table's RL rows (bench/seed_table_rl.cc).
#pragma once

#include <functional>
#include <string>

#include "bench/seed_rows.h"

namespace moetrace::bench {

// row(technique, pair of runs, published, measured, note)
using RowFn = std::function<void(std::string, std::string, std::string, std::string, std::string)>;

// Adds the RL rows when on("rl"), and their figures to `fig` (seed_table --json).
void RlRows(const std::function<bool(const std::string&)>& on, const RowFn& row, SeedFigures* fig);

}  // namespace moetrace::bench
