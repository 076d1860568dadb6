// seed_table's RL rows (bench/seed_table_rl.cc).
#pragma once

#include <functional>
#include <string>

namespace moetrace::bench {

// row(technique, pair of runs, published, measured, note)
using RowFn = std::function<void(std::string, std::string, std::string, std::string, std::string)>;

// Adds the RL rows when on("rl").
void RlRows(const std::function<bool(const std::string&)>& on, const RowFn& row);

}  // namespace moetrace::bench
