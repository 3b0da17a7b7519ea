// Helpers for job tests on a LocalCluster: generate and put inputs, run a
// job through mrctl, read its output, and compute the same job with mr-local
// (the single-process oracle).
#pragma once

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/cluster_fixture.h"

namespace mr::testing {

class JobTest : public ScratchTest {
 protected:
  static void Put(const LocalCluster& c, const std::string& local, const std::string& dfs) {
    CommandResult r = c.Mrctl("dfs put " + Quote(local) + " " + Quote(dfs));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Local copies of what PutInputs put into the DFS (the oracle's inputs).
  struct Inputs {
    std::string text, web, dna;  // /in/text.txt, /in/web.xml, /in/dna.fa
    std::string docs;            // /in/docs: text and web as a.txt, b.xml (InvertedIndex)
  };
  // Generates text, web and dna of the given sizes (seeds seed, seed + 1,
  // seed + 2) and puts them, and the docs directory, under /in.
  Inputs PutInputs(const LocalCluster& c, const std::string& text_size,
                   const std::string& other_size, int seed) {
    Inputs in{Generate("text", text_size, seed), Generate("web", other_size, seed + 1),
              Generate("dna", other_size, seed + 2), work_ + "/docs"};
    Put(c, in.text, "/in/text.txt");
    Put(c, in.web, "/in/web.xml");
    Put(c, in.dna, "/in/dna.fa");
    std::filesystem::create_directories(in.docs);
    std::filesystem::copy_file(in.text, in.docs + "/a.txt");
    std::filesystem::copy_file(in.web, in.docs + "/b.xml");
    Put(c, in.docs + "/a.txt", "/in/docs/a.txt");
    Put(c, in.docs + "/b.xml", "/in/docs/b.xml");
    return in;
  }

  // `params`: "k=v" or "k=v,k2=v2" or "".
  static std::string ParamFlags(const std::string& params, const char* flag) {
    std::string flags;
    std::stringstream ss(params);
    for (std::string kv; std::getline(ss, kv, ',');) {
      if (!kv.empty()) flags += std::string(" ") + flag + " " + Quote(kv);
    }
    return flags;
  }

  // Runs a job to its end; its record (state "succeeded" on success).
  static nlohmann::json RunJob(const LocalCluster& c, const std::string& job, const std::string& input,
                               const std::string& output, int reducers, const std::string& params) {
    CommandResult r = c.Mrctl("job run " + job + " -i " + Quote(input) + " -o " + Quote(output) +
                              " -r " + std::to_string(reducers) + ParamFlags(params, "-p") +
                              " --wait --json");
    auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return {{"state", "mrctl failed: " + r.err}};
    return j;
  }

  // The output directory's parts, concatenated in order.
  static std::string Cat(const LocalCluster& c, const std::string& dir) {
    CommandResult r = c.Mrctl("dfs cat " + Quote(dir));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  static std::string Sha(const LocalCluster& c, const std::string& path) {
    return Shell(Mrctl() + " --config " + Quote(c.config()) + " dfs cat " + Quote(path) +
                 " | sha256sum | cut -d' ' -f1").out;
  }

  static std::vector<std::string> ListParts(const LocalCluster& c, const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : c.MrctlJson("dfs ls --json " + Quote(dir))) names.push_back(e["path"]);
    return names;
  }

  // mr-local's output for the same job: its parts concatenated in order.
  std::string Oracle(const std::string& job, const std::string& input, int reducers,
                     const std::string& params, int64_t split_bytes) {
    const std::string out = work_ + "/oracle-" + std::to_string(oracle_runs_++);
    CommandResult r = Shell(Quote(BuildDir() + "/jobs/mr-local") + " " + job + " --input " + Quote(input) +
                            " --output " + Quote(out) + " --reducers " + std::to_string(reducers) +
                            " --split-bytes " + std::to_string(split_bytes) + ParamFlags(params, "--param"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> parts;
    for (const auto& e : std::filesystem::directory_iterator(out)) parts.push_back(e.path().string());
    std::sort(parts.begin(), parts.end());
    std::string all;
    for (const auto& p : parts) {
      std::ifstream f(p, std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      all += ss.str();
    }
    return all;
  }

  static std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
    for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
      s.replace(pos, from.size(), to);
    }
    return s;
  }

  static std::string FirstFile(const std::string& dir) {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files.empty() ? "" : files.front();
  }

  int oracle_runs_ = 0;
};

}  // namespace mr::testing
