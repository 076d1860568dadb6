// Ascend importer throughput on synthetic torch_npu output shaped like the
// real advisor-timeline trace: per device task a cpu_op, an Enqueue, the
// async_task_queue flow, a Dequeue, an AscendCL launch, the HostToDevice and
// async_npu flows and the task itself. Reports events/s and input bytes/s.
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

void BM_TraceView(benchmark::State& state) {
  int64_t events = 0;
  std::string json = MakeTraceView(static_cast<int>(state.range(0)), &events);
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
BENCHMARK(BM_TraceView)->Arg(20000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_KernelDetails(benchmark::State& state) {
  std::string csv =
      "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
      "Wait Time(us),Block Dim,Mix Block Dim,Input Shapes,Input Data Types\n";
  int64_t rows = state.range(0);
  int64_t t = 1699529622790614800;
  for (int64_t i = 0; i < rows; ++i) {
    csv += "1,4294967295," + std::to_string(i) + ",16,Cast66,Cast,AI_VECTOR_CORE," + Us(t) +
           ",3.14,261.56,9,0,\"\"\"4,1025\"\"\",INT64\n";
    t += 5000;
  }
  for (auto _ : state) {
    Rank rank;
    ImportKernelDetails(CsvTable::Parse(csv, "k.csv"), true, &rank);
    benchmark::DoNotOptimize(rank);
  }
  state.SetItemsProcessed(state.iterations() * rows);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(csv.size()));
  state.counters["input_bytes/event"] = static_cast<double>(csv.size()) / rows;
}
BENCHMARK(BM_KernelDetails)->Arg(200000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moetrace
BENCHMARK_MAIN();
