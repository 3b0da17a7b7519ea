// Counters on a real cluster (docs/logs-and-counters.md, "Counters"):
// WordCount's framework counters equal what shell pipelines compute from
// the input and the output; a streaming job's `reporter:counter:` lines add
// up to exactly their sums and its `reporter:status:` line is kept per
// task; a plug-in's user counter equals grep's count; and all of them are
// still in the history after the master is killed and started again.
#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class CountersTest : public JobTest {
 protected:
  // A shell pipeline's output as a number.
  static int64_t Number(const std::string& pipeline) {
    CommandResult r = Shell("export LC_ALL=C; " + pipeline);
    EXPECT_EQ(r.exit_code, 0) << pipeline << ": " << r.err;
    return std::stoll(r.out.empty() ? "-1" : r.out);
  }
  // A counter of a record or task (-1 when it has none).
  static int64_t Counter(const json& record, const std::string& group, const std::string& name) {
    return record.value(json::json_pointer("/counters/" + group + "/" + name), int64_t{-1});
  }
  static int64_t Framework(const json& record, const char* name) { return Counter(record, "framework", name); }
  static int64_t Sum(const json& traffic) {
    return traffic["local"].get<int64_t>() + traffic["same_dc"].get<int64_t>() +
           traffic["other_dc"].get<int64_t>();
  }
  // The text of the input: generated text with empty and blank lines added
  // (for the plug-in's EMPTY_LINES).
  std::string MakeInput() {
    const std::string text = Generate("text", "700K", 11);
    const std::string input = work_ + "/input.txt";
    const CommandResult r = Shell("awk 'NR % 7 == 0 { print \"\" } NR % 11 == 0 { print \"  \\t\" } "
                                  "{ print }' " + Quote(text) + " > " + Quote(input));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return input;
  }
  // A streaming mapper that passes lines on and reports on stderr: one
  // stream/lines per line, its length in stream/bytes, -2 in stream/neg
  // once per task, two malformed reporter lines, a plain line, and its
  // status.
  std::string MapperScript() {
    const std::string path = work_ + "/reporter_mapper.sh";
    std::ofstream(path) << "#!/bin/sh\nLC_ALL=C exec awk '\n"
                           "{ print $0 \"\\t1\"\n"
                           "  printf \"reporter:counter:stream,lines,1\\n\" > \"/dev/stderr\"\n"
                           "  printf \"reporter:counter:stream,bytes,%d\\n\", length($0) > \"/dev/stderr\" }\n"
                           "END { printf \"reporter:counter:bad\\nreporter:counter:stream,x,1,2\\n\" > \"/dev/stderr\"\n"
                           "  printf \"reporter:counter:stream,neg,-2\\nnot a reporter line\\n\" > \"/dev/stderr\"\n"
                           "  printf \"reporter:status:mapped %d lines\\n\", NR > \"/dev/stderr\" }'\n";
    return path;
  }
};

TEST_F(CountersTest, FrameworkStreamingAndPluginCountersMatchPipelinesAndSurviveARestart) {
  LocalCluster c(2, 2, "--block-size 131072 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string input = MakeInput();
  Put(c, input, "/in/input.txt");
  const std::string in = Quote(input);
  const int64_t lines = Number("wc -l < " + in);
  const int64_t bytes = Number("wc -c < " + in);
  const std::string words = "tr -s ' \\t\\n\\r\\v\\f' '\\n' < " + in + " | grep -v '^$'";
  const int64_t word_count = Number(words + " | wc -l");
  const int64_t distinct = Number(words + " | sort -u | wc -l");
  const int64_t empty_lines = Number("grep -c '^[[:space:]]*$' " + in);
  ASSERT_GT(empty_lines, 100);

  // WordCount: the framework's counters.
  json wc = RunJob(c, "wordcount", "/in/input.txt", "/out/wc", 3, "");
  ASSERT_EQ(wc["state"], "succeeded") << wc.dump(2);
  const int64_t id_wc = wc["id"];
  wc = c.MrctlJson("job show --json " + std::to_string(id_wc));
  ASSERT_GT(wc["maps_total"].get<int>(), 3);
  EXPECT_EQ(Framework(wc, "MAP_INPUT_RECORDS"), lines);
  EXPECT_EQ(Framework(wc, "MAP_INPUT_BYTES"), bytes);
  EXPECT_EQ(Framework(wc, "MAP_OUTPUT_RECORDS"), word_count);
  EXPECT_EQ(Framework(wc, "COMBINE_INPUT_RECORDS"), word_count);  // counted in the table
  EXPECT_EQ(Framework(wc, "REDUCE_INPUT_GROUPS"), distinct);
  EXPECT_EQ(Framework(wc, "REDUCE_OUTPUT_RECORDS"), distinct);
  EXPECT_EQ(Framework(wc, "REDUCE_INPUT_RECORDS"), Framework(wc, "COMBINE_OUTPUT_RECORDS"));
  EXPECT_EQ(Framework(wc, "SPILLED_RECORDS"), Framework(wc, "COMBINE_OUTPUT_RECORDS"));  // one spill each
  EXPECT_EQ(Framework(wc, "DFS_BYTES_WRITTEN"), static_cast<int64_t>(Cat(c, "/out/wc").size()));
  EXPECT_EQ(Framework(wc, "DFS_BYTES_READ"), Sum(wc["map_input_bytes"]));
  EXPECT_EQ(Framework(wc, "SHUFFLE_BYTES_LOCAL"), wc["shuffle_bytes"]["local"]);
  EXPECT_EQ(Framework(wc, "SHUFFLE_BYTES_DATACENTER"), wc["shuffle_bytes"]["same_dc"]);
  EXPECT_EQ(Framework(wc, "SHUFFLE_BYTES_CROSS_DC"), wc["shuffle_bytes"]["other_dc"]);
  EXPECT_GT(Framework(wc, "CPU_MILLISECONDS"), 0);
  int64_t map_records = 0;  // the job's sum is the tasks'
  for (const json& m : wc["map_tasks"]) map_records += Framework(m, "MAP_INPUT_RECORDS");
  EXPECT_EQ(map_records, lines);
  const CommandResult shown = c.Mrctl("job show --tasks " + std::to_string(id_wc));
  EXPECT_NE(shown.out.find("REDUCE_OUTPUT_RECORDS"), std::string::npos) << shown.out;

  // Streaming: the reporter lines' sums, malformed ones skipped, a status per map.
  CommandResult r = c.Mrctl("job run streaming --mapper 'sh reporter_mapper.sh' --file " +
                            Quote(MapperScript()) + " -i /in/input.txt -o /out/stream -r 1 --wait --json");
  json st = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(st.is_object() && st["state"] == "succeeded") << r.out << r.err;
  const int64_t id_st = st["id"];
  st = c.MrctlJson("job show --json " + std::to_string(id_st));
  const int maps = st["maps_total"];
  EXPECT_EQ(Counter(st, "stream", "lines"), lines);
  EXPECT_EQ(Counter(st, "stream", "bytes"), bytes - lines);
  EXPECT_EQ(Counter(st, "stream", "neg"), -2 * maps);
  EXPECT_EQ(st["counters"]["stream"].size(), 3u) << st["counters"].dump();
  int64_t status_lines = 0;
  for (const json& m : st["map_tasks"]) {
    const std::string status = m.value("status", "");
    ASSERT_TRUE(status.starts_with("mapped ")) << status;
    status_lines += std::stoll(status.substr(7));
  }
  EXPECT_EQ(status_lines, lines);
  const CommandResult tasks = c.Mrctl("job show --tasks " + std::to_string(id_st));
  EXPECT_NE(tasks.out.find("status \"mapped "), std::string::npos) << tasks.out;

  // A plug-in's user counter (examples/plugin-wordcount) and status.
  json pl = RunJob(c, BuildDir() + "/tests/plugins/libplugin_wordcount.so", "/in/input.txt", "/out/pl", 2, "");
  ASSERT_EQ(pl["state"], "succeeded") << pl.dump(2);
  const int64_t id_pl = pl["id"];
  pl = c.MrctlJson("job show --json " + std::to_string(id_pl));
  EXPECT_EQ(Counter(pl, "wordcount", "EMPTY_LINES"), empty_lines);
  EXPECT_EQ(Framework(pl, "REDUCE_OUTPUT_RECORDS"), distinct);
  EXPECT_GT(Framework(pl, "CPU_MILLISECONDS"), 0);  // mr-task's, reaped by the worker
  EXPECT_TRUE(pl["map_tasks"][0].value("status", "").starts_with("longest word: ")) << pl["map_tasks"][0];

  // The history keeps them across a master restart.
  ASSERT_EQ(c.Script("kill master").exit_code, 0);
  const CommandResult started = c.Script("start master");
  ASSERT_EQ(started.exit_code, 0) << started.err;
  for (const json* before : {&wc, &st, &pl}) {
    json after;
    WaitFor(
        [&] {
          after = json::parse(c.Mrctl("job show --json " + std::to_string((*before)["id"].get<int64_t>())).out,
                              nullptr, false);
          return after.is_object();
        },
        30s);
    ASSERT_TRUE(after.is_object());
    ASSERT_TRUE(before->contains("counters"));
    EXPECT_EQ(after["counters"], (*before)["counters"]);
    EXPECT_EQ(after["map_tasks"][0].value("status", "?"), (*before)["map_tasks"][0].value("status", "-"));
  }
}

}  // namespace
}  // namespace mr::testing
