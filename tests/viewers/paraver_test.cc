// Paraver export: the .prv/.pcf/.row parsed back and checked against the fixture: header resource
// model, record counts, states per thread (never overlapping), nested event values, communication
// records from launches to GPU activity, labels in the .pcf, names in the .row, time order.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "tests/common/test_util.h"
#include "tests/viewers/viewer_fixture.h"
#include "tools/viewers/viewer_export.h"

namespace gt::viewers {
namespace {

using testing::Us;

struct PrvRecord {
  int kind = 0;
  int cpu = 0, task = 0, thread = 0;
  int64_t time = 0, end = 0;  // state: begin/end; event: time; comm: logical send
  int state = 0;
  std::vector<std::pair<int64_t, uint64_t>> values;  // events
  int recv_task = 0, recv_thread = 0;                // comms
  int64_t recv_time = 0, tag = 0;
};

struct ParsedParaver {
  std::string header;
  std::vector<PrvRecord> records;
  std::map<int64_t, std::string> type_labels;
  std::map<int64_t, std::map<uint64_t, std::string>> values;  // type -> value -> label
  std::map<int, std::string> states;
  std::vector<std::string> row_lines;
  std::vector<std::string> errors;

  std::string Label(int64_t type, uint64_t value) const {
    auto t = values.find(type);
    if (t == values.end())
      return "?";
    auto v = t->second.find(value);
    return v == t->second.end() ? "?" : v->second;
  }
  // "<label>@<time>" of the events of `type` on (task, thread), in file order.
  std::vector<std::string> Timeline(int task, int thread, int64_t type) const {
    std::vector<std::string> out;
    for (const PrvRecord& r : records) {
      if (r.kind != 2 || r.task != task || r.thread != thread)
        continue;
      for (const auto& [t, v] : r.values) {
        if (t == type)
          out.push_back((v == 0 ? "End" : Label(type, v)) + "@" + std::to_string(r.time));
      }
    }
    return out;
  }
  std::vector<std::string> States(int task, int thread) const {
    std::vector<std::string> out;
    for (const PrvRecord& r : records) {
      if (r.kind == 1 && r.task == task && r.thread == thread) {
        out.push_back(states.at(r.state) + " " + std::to_string(r.time) + "-" + std::to_string(r.end));
      }
    }
    return out;
  }
};

std::vector<int64_t> Fields(const std::string& line) {
  std::vector<int64_t> out;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ':');)
    out.push_back(std::stoll(f));
  return out;
}

ParsedParaver Parse(const std::string& stem) {
  ParsedParaver p;
  std::istringstream prv(test::ReadFile(stem + ".prv"));
  std::getline(prv, p.header);
  int64_t last = -1;
  for (std::string line; std::getline(prv, line);) {
    std::vector<int64_t> f = Fields(line);
    PrvRecord r;
    r.kind = static_cast<int>(f.at(0));
    r.cpu = static_cast<int>(f.at(1));
    r.task = static_cast<int>(f.at(3));
    r.thread = static_cast<int>(f.at(4));
    r.time = f.at(5);
    if (f.at(2) != 1)
      p.errors.push_back("application is not 1: " + line);
    if (r.kind == 1) {
      if (f.size() != 8)
        p.errors.push_back("state with " + std::to_string(f.size()) + " fields");
      r.end = f.at(6);
      r.state = static_cast<int>(f.at(7));
      if (r.end < r.time)
        p.errors.push_back("state ends before it begins: " + line);
    } else if (r.kind == 2) {
      if (f.size() < 8 || f.size() % 2 != 0)
        p.errors.push_back("bad event: " + line);
      for (size_t i = 6; i + 1 < f.size(); i += 2)
        r.values.emplace_back(f[i], static_cast<uint64_t>(f[i + 1]));
    } else if (r.kind == 3) {
      if (f.size() != 15)
        p.errors.push_back("bad communication: " + line);
      r.recv_task = static_cast<int>(f.at(9));
      r.recv_thread = static_cast<int>(f.at(10));
      r.recv_time = f.at(11);
      r.tag = f.at(14);
      if (f.at(6) != r.time || f.at(12) != r.recv_time)
        p.errors.push_back("physical != logical time: " + line);
    } else {
      p.errors.push_back("unknown record: " + line);
    }
    if (r.time < last)
      p.errors.push_back("records out of time order at: " + line);
    last = r.time;
    p.records.push_back(std::move(r));
  }
  std::istringstream pcf(test::ReadFile(stem + ".pcf"));
  std::string section;
  int64_t current_type = 0;
  for (std::string line; std::getline(pcf, line);) {
    if (line.empty())
      continue;
    if (line == "STATES" || line == "STATES_COLOR" || line == "EVENT_TYPE" || line == "VALUES" ||
        line == "DEFAULT_OPTIONS" || line == "DEFAULT_SEMANTIC") {
      section = line;
      continue;
    }
    std::istringstream in(line);
    if (section == "STATES") {
      int value;
      in >> value;
      std::string label;
      std::getline(in >> std::ws, label);
      p.states[value] = label;
    } else if (section == "EVENT_TYPE") {
      int gradient;
      in >> gradient >> current_type;
      std::getline(in >> std::ws, p.type_labels[current_type]);
    } else if (section == "VALUES") {
      uint64_t value;
      in >> value;
      std::getline(in >> std::ws, p.values[current_type][value]);
    }
  }
  std::istringstream row(test::ReadFile(stem + ".row"));
  for (std::string line; std::getline(row, line);)
    p.row_lines.push_back(line);
  return p;
}

std::string U(int64_t us) {
  return std::to_string(Us(us));
}

TEST(Paraver, MultiRankTrace) {
  test::TempDir dir;
  testing::WriteFixture(dir.File("run.sqlite"));
  ViewerOptions o;
  o.format = ViewerFormat::kParaver;
  o.database = dir.File("run.sqlite");
  o.output = dir.File("run");  // .prv added
  ViewerResult result;
  Status st = ExportViewer(o, &result);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(result.outputs, (std::vector<std::string>{dir.File("run.prv"), dir.File("run.pcf"), dir.File("run.row")}));
  ParsedParaver p = Parse(dir.File("run"));
  for (const std::string& e : p.errors)
    ADD_FAILURE() << e;

  // 5 tasks (ranks 0-3, then the rankless process as rank 4); per rank 2 host threads, 4 stream
  // threads and the GPU's metrics thread; nodes node-a (ranks 0, 1, 4) and node-b.
  const std::string date_free = p.header.substr(p.header.find("):") + 2);
  EXPECT_EQ(p.header.rfind("#Paraver (", 0), 0u);
  EXPECT_EQ(date_free, std::to_string(Us(10400)) + "_ns:2(15,14):1:5(7:1,7:1,7:2,7:2,1:1)");
  std::map<int, size_t> kinds;
  for (const PrvRecord& r : p.records)
    ++kinds[r.kind];
  EXPECT_EQ(kinds[3], 7u * 4);  // one communication per launch with GPU work

  // States never overlap on a thread.
  std::map<std::pair<int, int>, int64_t> busy;
  for (const PrvRecord& r : p.records) {
    if (r.kind != 1)
      continue;
    int64_t& until = busy[{r.task, r.thread}];
    EXPECT_GE(r.time, until) << "overlapping states on task " << r.task << " thread " << r.thread;
    until = r.end;
  }

  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const int task = rank + 1;
    const int64_t o100 = 100 * rank;
    auto u = [&](int64_t us) { return U(us + o100); };
    // Thread 1: main; 2: dataloader; 3-6: CUDA-D0.S7, .S13, .S20, .sync; 7: GPU metrics.
    EXPECT_EQ(
        p.States(task, 1),
        (std::vector<std::string>{
            "Allocating memory " + u(1100) + "-" + u(1200), "Configuring accelerator " + u(2100) + "-" + u(2300),
            "Memory transfer " + u(2400) + "-" + u(2500), "Memory transfer " + u(2600) + "-" + u(2650),
            "Configuring accelerator " + u(2700) + "-" + u(2800), "Configuring accelerator " + u(5600) + "-" + u(5700),
            "Synchronization " + u(7000) + "-" + u(8500), "Synchronization " + u(8550) + "-" + u(8750)}));
    EXPECT_EQ(p.States(task, 3), (std::vector<std::string>{
                                     "Running " + u(3000) + "-" + u(4000), "Memory transfer " + u(4100) + "-" + u(4200),
                                     "Memory transfer " + u(4300) + "-" + u(4350), "Running " + u(4400) + "-" + u(4500),
                                     "Running " + u(4500) + "-" + u(4600)}));
    EXPECT_EQ(p.States(task, 4), (std::vector<std::string>{"Running " + u(5800) + "-" + u(6800)}));
    // Two overlapping kernels on one stream: the second's state starts when the first ends.
    EXPECT_EQ(p.States(task, 5),
              (std::vector<std::string>{"Running " + u(6000) + "-" + u(6500), "Running " + u(6500) + "-" + u(6900)}));
    EXPECT_TRUE(p.States(task, 6).empty());
    // NVTX push/pop: the enclosing range shows again when the inner one ends.
    EXPECT_EQ(p.Timeline(task, 1, 9003),
              (std::vector<std::string>{"step@" + u(1000), "forward@" + u(2000), "step@" + u(5000), "End@" + u(9000)}));
    EXPECT_EQ(p.Timeline(task, 1, 9500), (std::vector<std::string>{"ncclAllReduce@" + u(5500), "End@" + u(6500)}));
    EXPECT_EQ(p.Timeline(task, 1, 9002), std::vector<std::string>{"checkpoint@" + u(6000)});
    EXPECT_EQ(p.Timeline(task, 2, 9004), (std::vector<std::string>{"prefetch@" + u(1500), "End@" + u(7000)}));
    EXPECT_EQ(p.Timeline(task, 1, 63000020), (std::vector<std::string>{"cuLaunchKernel@" + u(2150), "End@" + u(2250)}));
    EXPECT_EQ(p.Timeline(task, 1, 63000000).size(), 16u);  // 8 runtime calls, begin and end
    EXPECT_EQ(p.Timeline(task, 3, 63000006),
              (std::vector<std::string>{"void compute_kernel<float>(float *, int)@" + u(3000), "End@" + u(4000),
                                        "graph_node_a(float *)@" + u(4400), "End@" + u(4500),
                                        "graph_node_b(float *)@" + u(4500), "End@" + u(4600)}));
    EXPECT_EQ(
        p.Timeline(task, 4, 63000007),
        (std::vector<std::string>{
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)@" + u(5800), "End@" + u(6800)}));
    EXPECT_EQ(p.Timeline(task, 3, 63000001),
              (std::vector<std::string>{"Memcpy HtoD (Pageable -> Device)@" + u(4100), "End@" + u(4200),
                                        "Memset (Device)@" + u(4300), "End@" + u(4350)}));
    EXPECT_EQ(p.Timeline(task, 3, 63000030), (std::vector<std::string>{"Stream Sync@" + u(7100), "End@" + u(8400)}));
    EXPECT_EQ(p.Timeline(task, 6, 63000030), (std::vector<std::string>{"Context Sync@" + u(8600), "End@" + u(8700)}));
    // Kernel launch parameters beside the kernel event.
    for (const PrvRecord& r : p.records) {
      if (r.kind == 2 && r.task == task && r.thread == 3 && r.time == Us(3000 + o100)) {
        std::map<int64_t, uint64_t> v(r.values.begin(), r.values.end());
        EXPECT_EQ(v.at(9101), 128u);
        EXPECT_EQ(v.at(9104), 256u);
        EXPECT_EQ(v.at(9108), 1024u);
        EXPECT_EQ(v.at(9110), 32u);
        EXPECT_EQ(v.at(9200), 10u);
      }
    }
    // Launch -> GPU activity lines, tagged with the correlation id.
    std::set<std::string> comms;
    for (const PrvRecord& r : p.records) {
      if (r.kind == 3 && r.task == task) {
        comms.insert(std::to_string(r.thread) + "@" + std::to_string(r.time) + "->" + std::to_string(r.recv_thread) +
                     "@" + std::to_string(r.recv_time) + "#" + std::to_string(r.tag));
        EXPECT_EQ(r.recv_task, task);
      }
    }
    EXPECT_EQ(comms, (std::set<std::string>{
                         "1@" + u(2100) + "->3@" + u(3000) + "#10", "1@" + u(2400) + "->3@" + u(4100) + "#11",
                         "1@" + u(2600) + "->3@" + u(4300) + "#14", "1@" + u(2700) + "->3@" + u(4400) + "#15",
                         "1@" + u(5600) + "->4@" + u(5800) + "#12", "2@" + u(3000) + "->5@" + u(6000) + "#16",
                         "2@" + u(3200) + "->5@" + u(6200) + "#17"}));
    // GPU metrics on the metrics thread.
    std::vector<std::string> sm;
    for (const PrvRecord& r : p.records) {
      if (r.kind == 2 && r.task == task && r.thread == 7) {
        for (const auto& [type, value] : r.values) {
          if (p.type_labels[type] == "GPU " + std::to_string(rank) + " SM Active [Throughput %]") {
            sm.push_back(std::to_string(value));
          }
        }
      }
    }
    EXPECT_EQ(sm, (std::vector<std::string>{std::to_string(10 + rank), std::to_string(11 + rank),
                                            std::to_string(12 + rank)}));
  }
  EXPECT_EQ(p.States(5, 1).size(), 0u);
  EXPECT_EQ(p.Timeline(5, 1, 9003), (std::vector<std::string>{"load@" + U(3000), "End@" + U(3600)}));

  // Labels.
  EXPECT_EQ(p.states.at(1), "Running");
  EXPECT_EQ(p.states.at(5), "Synchronization");
  EXPECT_EQ(p.states.at(17), "Memory transfer");
  EXPECT_EQ(p.states.at(32), "Configuring accelerator");
  EXPECT_EQ(p.type_labels.at(63000000), "CUDA runtime API call");
  EXPECT_EQ(p.type_labels.at(63000006), "CUDA kernel");
  EXPECT_EQ(p.type_labels.at(9200), "Correlation ID");
  EXPECT_EQ(p.values.at(63000000).at(0), "End");
  std::set<std::string> api;
  for (const auto& [v, label] : p.values.at(63000000))
    api.insert(label);
  EXPECT_EQ(api, (std::set<std::string>{"End", "cudaMalloc", "cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync",
                                        "cudaGraphLaunch", "cudaStreamSynchronize", "cudaDeviceSynchronize"}));
  // Resource names.
  ASSERT_GE(p.row_lines.size(), 36u);
  EXPECT_EQ(p.row_lines[0], "LEVEL CPU SIZE 29");
  EXPECT_EQ(p.row_lines[1], "1.node-a");
  EXPECT_EQ(p.row_lines[15], "15.node-a");
  EXPECT_EQ(p.row_lines[16], "16.node-b");
  EXPECT_EQ(p.row_lines[31], "LEVEL NODE SIZE 2");
  EXPECT_EQ(p.row_lines[32], "node-a");
  EXPECT_EQ(p.row_lines[35], "LEVEL THREAD SIZE 29");
  EXPECT_EQ(p.row_lines[36], "python (rank 0, pid 1000, tid 1000)");
  EXPECT_EQ(p.row_lines[37], "dataloader (rank 0, pid 1000, tid 2000)");
  EXPECT_EQ(p.row_lines[38], "CUDA-D0.S7 (rank 0)");
  EXPECT_EQ(p.row_lines[41], "CUDA-D0.sync (rank 0)");
  EXPECT_EQ(p.row_lines[42], "GPU 0 metrics");
  EXPECT_EQ(p.row_lines.back(), "pt_data_worker (rank 4, pid 5000, tid 5000)");
}

TEST(Paraver, ExistingFilesAreKept) {
  test::TempDir dir;
  testing::WriteFixture(dir.File("run.sqlite"), testing::FixtureOptions{1, false, false, false});
  test::WriteFile(dir.File("run.row"), "mine");
  ViewerOptions o;
  o.format = ViewerFormat::kParaver;
  o.database = dir.File("run.sqlite");
  o.output = dir.File("run.prv");
  ViewerResult r;
  Status st = ExportViewer(o, &r);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), dir.File("run.row") + " exists; use --force-overwrite to replace it");
  EXPECT_TRUE(dir.Find(".prv").empty());
  EXPECT_TRUE(dir.Find(".pcf").empty());
  o.force = true;
  ASSERT_TRUE(ExportViewer(o, &r).ok());
  ParsedParaver p = Parse(dir.File("run"));
  for (const std::string& e : p.errors)
    ADD_FAILURE() << e;
  EXPECT_EQ(p.row_lines[0], "LEVEL CPU SIZE 6");
}

TEST(Paraver, NcclOperationsThread) {
  test::TempDir dir;
  testing::WriteFixture(dir.File("run.sqlite"), testing::FixtureOptions{2, false, false, true});
  ViewerOptions o;
  o.format = ViewerFormat::kParaver;
  o.database = dir.File("run.sqlite");
  o.output = dir.File("run.prv");
  ViewerResult r;
  ASSERT_TRUE(ExportViewer(o, &r).ok());
  ParsedParaver p = Parse(dir.File("run"));
  for (const std::string& e : p.errors)
    ADD_FAILURE() << e;
  // Threads per task: 2 host, 4 streams, NCCL operations.
  EXPECT_EQ(p.header.substr(p.header.find("):") + 2), std::to_string(Us(10200)) + "_ns:1(14):1:2(7:1,7:1)");
  EXPECT_EQ(p.Timeline(2, 7, 9510), (std::vector<std::string>{"AllReduce@" + U(5900), "End@" + U(6900)}));
  EXPECT_EQ(p.row_lines.back(), "NCCL operations (rank 1)");
}

TEST(Paraver, ReferenceNsysExports) {
  const std::string ref = test::ReferenceDir();
  if (ref.empty())
    GTEST_SKIP() << "shared/reference is absent";
  test::TempDir dir;
  for (const char* name : {"flameox-nsys-2025.5.2", "nsysai-mock-nsys-2026.1.1"}) {
    SCOPED_TRACE(name);
    test::Db sql(ref + "/" + name + ".sqlite");
    ViewerOptions o;
    o.format = ViewerFormat::kParaver;
    o.database = ref + "/" + name + ".sqlite";
    o.output = dir.File(name);
    ViewerResult r;
    ASSERT_TRUE(ExportViewer(o, &r).ok());
    ParsedParaver p = Parse(dir.File(name));
    for (const std::string& e : p.errors)
      ADD_FAILURE() << e;
    size_t kernel_events = 0;
    for (const PrvRecord& rec : p.records) {
      for (const auto& [type, value] : rec.values)
        kernel_events += (type == 63000006 && value != 0);
    }
    EXPECT_EQ(static_cast<int64_t>(kernel_events), *sql.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
  }
}

}  // namespace
}  // namespace gt::viewers
