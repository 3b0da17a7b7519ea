#include "tools/job_sample.h"

#include <algorithm>
#include <cstdio>

#include "jobs/codec.h"

namespace mr::tools {
namespace {

constexpr int kMaxBlocks = 32;
constexpr int64_t kBytesPerBlock = 64 << 10;

struct SampledBlock {
  pb::LocatedBlock block;
  jobs::Codec codec = jobs::Codec::kNone;  // of its file
};

// The blocks of file `path` to sample: all of them, or a compressed file's first.
void AddBlocks(const std::string& path, const pb::StatReply& file, std::vector<SampledBlock>* blocks) {
  const jobs::Codec codec = jobs::CodecOfPath(path);
  for (const auto& b : file.blocks()) {
    blocks->push_back({b, codec});
    if (codec != jobs::Codec::kNone) break;
  }
}

// Up to per_block lines of `data`, the first bytes of a block (of a file
// when `starts_file`), into *lines.
void TakeLines(const std::string& data, bool starts_file, size_t per_block, std::vector<std::string>* lines) {
  // Lines end as map tasks end them (jobs/line_reader.h): at '\n', "\r\n"
  // or a lone '\r'. A block after the first starts after its first one.
  auto past = [&data](size_t end) {
    return end + (data[end] == '\r' && end + 1 < data.size() && data[end + 1] == '\n' ? 2 : 1);
  };
  size_t pos = 0;
  if (!starts_file) {
    const size_t end = data.find_first_of("\r\n");
    if (end == std::string::npos) return;
    pos = past(end);
  }
  for (size_t taken = 0; taken < per_block; ++taken) {
    const size_t end = data.find_first_of("\r\n", pos);
    if (end == std::string::npos) break;  // a cut-off last line is not a sample
    lines->push_back(data.substr(pos, end - pos));
    pos = past(end);
  }
}

}  // namespace

awaitable<Result<std::vector<std::string>>> SampleInput(dfs::DfsClient& c, std::vector<std::string> inputs) {
  std::vector<SampledBlock> blocks;
  for (const std::string& in : inputs) {
    auto stat = co_await c.Stat(in);
    if (!stat.ok()) co_return stat.status();
    if (stat->inode().kind() == pb::INode::FILE) {
      AddBlocks(stat->path(), *stat, &blocks);
      continue;
    }
    auto list = co_await c.List(in);
    if (!list.ok()) co_return list.status();
    for (const auto& e : list->entries()) {
      if (e.inode().kind() != pb::INode::FILE || e.name().starts_with("_") || e.name().starts_with(".")) continue;
      const std::string path = stat->path() + (stat->path() == "/" ? "" : "/") + e.name();
      auto file = co_await c.Stat(path);
      if (!file.ok()) co_return file.status();
      AddBlocks(path, *file, &blocks);
    }
  }
  std::vector<std::string> lines;
  if (blocks.empty()) co_return lines;
  const size_t step = (blocks.size() + kMaxBlocks - 1) / kMaxBlocks;
  const size_t per_block = 4000 / ((blocks.size() + step - 1) / step) + 1;
  for (size_t i = 0; i < blocks.size(); i += step) {
    const pb::LocatedBlock& block = blocks[i].block;
    std::string data;
    dfs::ByteSink sink = [&data](std::span<const char> d) {
      data.append(d.data(), d.size());
      return Status::OK();
    };
    const int64_t n = std::min(kBytesPerBlock, block.bytes());
    Status read = co_await c.ReadBlock(block, 0, n, sink);
    if (read.IsUnavailable()) {
      std::fprintf(stderr, "mrctl: warning: the sample leaves out block %llu: %s\n",
                   static_cast<unsigned long long>(block.id()), read.ToString().c_str());
      continue;
    }
    MR_CO_RETURN_IF_ERROR(read);
    if (blocks[i].codec != jobs::Codec::kNone) {
      data = jobs::DecodePrefix(blocks[i].codec, data, 4 * kBytesPerBlock);
    }
    TakeLines(data, block.offset() == 0, per_block, &lines);
  }
  co_return lines;
}

}  // namespace mr::tools
