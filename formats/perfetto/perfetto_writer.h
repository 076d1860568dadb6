// Streaming exporter to Perfetto's protobuf trace format (.pftrace), for
// ui.perfetto.dev and trace_processor.
//
// Each rank is one packet sequence: a process track (pid = ExportPid(rank), rank + 1,
// named "rank N (host)"), a thread track per host thread and per device stream
// (streams named "NPU stream 3 (compute)"), counter tracks (bytes for memory
// counters), slices as BEGIN/END pairs with interned names and categories,
// instants for zero-length events and flows from each op's last launch to the
// device op. AddRank writes the rank's packets to the output file as they are
// made (~1 MB at a time). Its encoders (CreateEncoder) write whole ranks on
// other threads (rank_packets.h) and AddEncoded appends them in order, giving
// the same bytes: only the thread descriptors, whose tids must be unique in
// the file, are written at append time. Schema: formats/proto/perfetto_trace.proto.
#pragma once

#include <memory>
#include <string>

#include "formats/trace_io.h"

namespace moetrace {

// Throws InputError when `path` cannot be created. The file appears only when
// Finish() succeeds.
std::unique_ptr<TraceSink> CreatePerfettoSink(const std::string& path);

}  // namespace moetrace
