// The sample of a job's input that `mrctl job run -r N` (N > 1) hands to the
// job's Plan() (Sort's split points): docs/jobs.md, "A job's life", step 1.
#pragma once

#include <string>
#include <vector>

#include "common/rpc.h"
#include "common/status.h"
#include "dfs/client.h"

namespace mr::tools {

// Up to ~4,000 lines from up to 32 blocks spread over the input, for Plan()
// (jobs::RunLocal samples the same way). A block's first, partial line is
// skipped unless the block starts its file. A compressed file (jobs/codec.h)
// gives only its first block, decompressed as far as its first bytes go (its
// other blocks cannot be decoded alone). A block no replica of which can be
// read now is left out of the sample, with a warning: the job itself waits
// for it (jobs.block_wait_ms), and a sample is still a sample.
awaitable<Result<std::vector<std::string>>> SampleInput(dfs::DfsClient& c, std::vector<std::string> inputs);

}  // namespace mr::tools
