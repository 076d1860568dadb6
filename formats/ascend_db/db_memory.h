// MEMORY_RECORD and NPU_OP_MEM -> memory counter tracks (bytes).
#pragma once

#include "formats/ascend_db/db_context.h"

namespace moetrace {

// MEMORY_RECORD (torch_npu): per component (STRING_IDS name), counters
// "<component> allocated|reserved|active" sampled at `timestamp` from
// totalAllocated / totalReserved / totalActive; component PTA's allocated
// and reserved are kMemAllocated / kMemReserved, the rest kOther.
// NPU_OP_MEM (msprof): totalAllocate / totalReserve at each allocation and
// release -> "operator_memory allocated|reserved", kMemAllocated /
// kMemReserved when MEMORY_RECORD has no PTA rows, else kOther
// ("... (secondary)"), as the text importer does with operator_memory.csv.
void ReadMemory(DbContext* ctx);

}  // namespace moetrace
