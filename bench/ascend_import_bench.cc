// Ascend importer throughput on synthetic torch_npu output shaped like the
// real advisor-timeline trace: per device task a cpu_op, an Enqueue, the
// async_task_queue flow, a Dequeue, an AscendCL launch, the HostToDevice and
// async_npu flows and the task itself; and the per-rank CSVs (kernel_details,
// memory_record, operator_memory, step_trace_time). Reports events (rows)/s
// and input bytes/s per CPU second; the CSV figures include the parse.
#include <benchmark/benchmark.h>

#include <string>

#include "formats/ascend/ascend_csv.h"
#include "formats/ascend/trace_view.h"

namespace moetrace {
namespace {

std::string Us(int64_t ns) {
  std::string s = std::to_string(ns / 1000) + "." + std::to_string(1000 + ns % 1000).substr(1);
  return s;
}

std::string MakeTraceView(int tasks, int64_t* events) {
  std::string j = R"({"traceEvents": [
{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"Python"}},
{"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"CANN"}},
{"ph":"M","name":"process_name","pid":3,"tid":0,"args":{"name":"Ascend Hardware"}})";
  *events = 0;
  int64_t t = 1704161511422904204;
  for (int i = 0; i < tasks; ++i) {
    std::string id = std::to_string(i);
    j += ",\n{\"ph\":\"X\",\"name\":\"aten::add_\",\"pid\":1,\"tid\":1,\"ts\":\"" + Us(t) +
         "\",\"dur\":20.5,\"cat\":\"cpu_op\",\"args\":{\"Sequence number\":-1}}";
    j += ",\n{\"ph\":\"X\",\"name\":\"Enqueue\",\"pid\":1,\"tid\":1,\"ts\":\"" + Us(t + 2000) +
         "\",\"dur\":3.33,\"cat\":\"enqueue\",\"args\":{\"correlation_id\":" + id + "}}";
    j += ",\n{\"ph\":\"s\",\"bp\":\"e\",\"name\":\"enqueue_to_dequeue\",\"id\":" + id +
         ",\"pid\":1,\"tid\":1,\"ts\":\"" + Us(t + 2000) + "\",\"cat\":\"async_task_queue\"}";
    j += ",\n{\"ph\":\"s\",\"bp\":\"e\",\"name\":\"torch_to_npu\",\"id\":" + id +
         ",\"pid\":1,\"tid\":1,\"ts\":\"" + Us(t + 1000) + "\",\"cat\":\"async_npu\"}";
    j += ",\n{\"ph\":\"X\",\"name\":\"Dequeue@aclnnInplaceAdd\",\"pid\":1,\"tid\":2,\"ts\":\"" +
         Us(t + 6000) + "\",\"dur\":10.27,\"cat\":\"dequeue\",\"args\":{\"correlation_id\":" + id + "}}";
    j += ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"enqueue_to_dequeue\",\"id\":" + id +
         ",\"pid\":1,\"tid\":2,\"ts\":\"" + Us(t + 6000) + "\",\"cat\":\"async_task_queue\"}";
    j += ",\n{\"name\":\"AscendCL@aclnnInplaceAdd\",\"pid\":2,\"tid\":2,\"ts\":\"" + Us(t + 7000) +
         "\",\"dur\":8.77012757357446,\"args\":{\"Thread Id\":2,\"Mode\":\"ACL_RTS\",\"level\":\"acl\"},\"ph\":\"X\"}";
    j += ",\n{\"name\":\"HostToDevice" + id + "\",\"ph\":\"s\",\"cat\":\"HostToDevice\",\"id\":\"" + id +
         "\",\"pid\":2,\"tid\":2,\"ts\":\"" + Us(t + 8000) + "\"}";
    j += ",\n{\"name\":\"aclnnAdd_AddAiCore_Add\",\"pid\":3,\"tid\":3,\"ts\":\"" + Us(t + 20000) +
         "\",\"dur\":1.2695,\"args\":{\"Model Id\":4294967295,\"Task Type\":\"AI_CORE\",\"Stream Id\":3,\"Task Id\":" +
         id + "},\"ph\":\"X\"}";
    j += ",\n{\"name\":\"HostToDevice" + id + "\",\"ph\":\"f\",\"id\":\"" + id + "\",\"ts\":\"" +
         Us(t + 20000) + "\",\"cat\":\"HostToDevice\",\"pid\":3,\"tid\":3,\"bp\":\"e\"}";
    j += ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"torch_to_npu\",\"id\":" + id +
         ",\"pid\":3,\"tid\":3,\"ts\":\"" + Us(t + 20000) + "\",\"cat\":\"async_npu\"}";
    *events += 11;
    t += 25000;
  }
  j += "\n]}";
  return j;
}

// Arg: events wanted (11 per task); the same MB/s at every size is the
// linearity check, up to ~0.55 GB at 4 M events (real files: 0.5-2 GB a rank).
void BM_TraceView(benchmark::State& state) {
  int64_t events = 0;
  std::string json = MakeTraceView(static_cast<int>(state.range(0) / 11), &events);
  size_t imported = 0;
  for (auto _ : state) {
    Rank rank;
    ImportTraceView(json, "bench.json", &rank);
    imported = rank.EventCount();
    benchmark::DoNotOptimize(rank);
  }
  state.SetItemsProcessed(state.iterations() * events);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(json.size()));
  state.counters["input_bytes/event"] = static_cast<double>(json.size()) / events;
  state.counters["imported_events"] = static_cast<double>(imported);
}
BENCHMARK(BM_TraceView)
    ->Arg(20000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Arg(4000000)
    ->Unit(benchmark::kMillisecond);

// The Overlap Analysis scan that opening a folder of several ranks runs on
// each trace_view.json before the import parses it again (ascend_importer.cc):
// what that second pass costs, per input byte.
void BM_ScanOverlap(benchmark::State& state) {
  int64_t events = 0;
  std::string json = MakeTraceView(static_cast<int>(state.range(0) / 11), &events);
  for (auto _ : state) {
    std::vector<LabeledValue> v = ScanOverlapAnalysis(json, "bench.json", 0);
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations() * events);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(json.size()));
}
BENCHMARK(BM_ScanOverlap)->Arg(1000000)->Unit(benchmark::kMillisecond);

// One CSV file: `make` builds it, `import` reads the parsed table.
template <typename Make, typename Import>
void RunCsv(benchmark::State& state, Make make, Import import) {
  const int64_t rows = state.range(0);
  const std::string csv = make(rows);
  for (auto _ : state) {
    Rank rank;
    import(CsvTable::Parse(csv, "bench.csv"), &rank);
    benchmark::DoNotOptimize(rank);
  }
  state.SetItemsProcessed(state.iterations() * rows);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(csv.size()));
  state.counters["input_bytes/row"] = static_cast<double>(csv.size()) / rows;
}

void BM_KernelDetails(benchmark::State& state) {
  RunCsv(
      state,
      [](int64_t rows) {
        std::string csv =
            "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
            "Wait Time(us),Block Dim,Mix Block Dim,Input Shapes,Input Data Types\n";
        int64_t t = 1699529622790614800;
        for (int64_t i = 0; i < rows; ++i) {
          csv += "1,4294967295," + std::to_string(i) + ",16,Cast66,Cast,AI_VECTOR_CORE," + Us(t) +
                 ",3.14,261.56,9,0,\"\"\"4,1025\"\"\",INT64\n";
          t += 5000;
        }
        return csv;
      },
      [](const CsvTable& t, Rank* rank) { ImportKernelDetails(t, true, rank); });
}
BENCHMARK(BM_KernelDetails)->Arg(200000)->Arg(2000000)->Unit(benchmark::kMillisecond);

void BM_MemoryRecord(benchmark::State& state) {
  RunCsv(
      state,
      [](int64_t rows) {
        std::string csv =
            "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),"
            "Stream Ptr,Device Type\n";
        int64_t t = 1699529622790614800;
        for (int64_t i = 0; i < rows; ++i) {
          csv += std::string(i % 4 == 3 ? "APP" : "PTA") + "," + Us(t) + "," +
                 std::to_string(1000 + i % 977) + ".25," + std::to_string(4000 + i % 13) + ".5," +
                 std::to_string(900 + i % 31) + ".125,187651681013760,NPU:0\n";
          t += 3000;
        }
        return csv;
      },
      [](const CsvTable& t, Rank* rank) { ImportMemoryRecord(t, rank); });
}
BENCHMARK(BM_MemoryRecord)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_OperatorMemory(benchmark::State& state) {
  RunCsv(
      state,
      [](int64_t rows) {
        std::string csv =
            "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),"
            "Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),"
            "Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),"
            "Release Total Active(MB),Stream Ptr,Device Type\n";
        int64_t t = 1699529622790614800;
        for (int64_t i = 0; i < rows; ++i) {
          csv += "aten::empty_strided," + std::to_string(64 + i % 512) + ".0," + Us(t) + "," +
                 Us(t + 7000) + "," + Us(t + 7000) + ",7.0,7.0," + std::to_string(1000 + i % 977) +
                 ".25,4096.0,1000.5," + std::to_string(999 + i % 977) + ".75,4096.0,999.5,"
                 "187651681013760,NPU:0\n";
          t += 3000;
        }
        return csv;
      },
      [](const CsvTable& t, Rank* rank) { ImportOperatorMemory(t, true, rank); });
}
BENCHMARK(BM_OperatorMemory)->Arg(500000)->Unit(benchmark::kMillisecond);

// Real files hold a row per step; many rows here only to time the reader.
std::string MakeStepTrace(int64_t rows) {
  std::string csv =
      "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
      "Communication(Not Overlapped and Exclude Receive),Preparing\n";
  for (int64_t i = 0; i < rows; ++i) {
    csv += std::to_string(i) + ",100534.125,20023.5,3001.25,23024.75,7250.5,130808.25,0,"
           "20023.5,1021.75\n";
  }
  return csv;
}

// The reader: figures in their compact form (StepTraceFigures).
void BM_StepTrace(benchmark::State& state) {
  RunCsv(state, MakeStepTrace, [](const CsvTable& t, Rank*) {
    StepTraceFigures f = ReadStepTrace(t);
    benchmark::DoNotOptimize(f);
  });
}
BENCHMARK(BM_StepTrace)->Arg(200000)->Unit(benchmark::kMillisecond);

// The same as LabeledValues (Metadata::reference's form): a key string per value.
void BM_StepTraceReference(benchmark::State& state) {
  RunCsv(state, MakeStepTrace, [](const CsvTable& t, Rank*) {
    std::vector<LabeledValue> v = StepTraceReference(t, 0);
    benchmark::DoNotOptimize(v);
  });
}
BENCHMARK(BM_StepTraceReference)->Arg(200000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moetrace
BENCHMARK_MAIN();
