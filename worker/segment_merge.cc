#include "worker/segment_merge.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <utility>


namespace mr::worker {

Result<std::vector<std::unique_ptr<SegmentReader>>> OpenSegmentFiles(
    const std::vector<std::string>& files) {
  std::vector<std::unique_ptr<SegmentReader>> readers;
  for (const std::string& file : files) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return Status::IOError("fetched segment '" + file + "' vanished");
    MR_ASSIGN_OR_RETURN(auto reader, SegmentReader::FromFile(file, 0, st.st_size));
    readers.push_back(std::move(reader));
  }
  return readers;
}

int MergePassSize(int n, int fan_in) {
  if (n <= fan_in) return 0;
  // Hadoop's getPassFactor: after a first pass of this size, n - 1 is a
  // multiple of fan_in - 1, so later passes of fan_in end at exactly fan_in.
  const int mod = (n - 1) % (fan_in - 1);
  return mod == 0 ? fan_in : mod + 1;
}

namespace {

// Merges `inputs` (in order) into the new segment file `out`.
Status MergeInto(const std::vector<std::string>& inputs, const std::string& out) {
  MR_ASSIGN_OR_RETURN(auto readers, OpenSegmentFiles(inputs));
  MergingReader merged(std::move(readers));
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("cannot create '" + out + "'");
  SegmentWriter writer(fd, 0);
  Status s;
  std::string_view key, value;
  while (s.ok()) {
    auto more = merged.NextKey(&key);
    if (!more.ok()) {
      s = more.status();
      break;
    }
    if (!*more) break;
    while (s.ok() && merged.NextValue(&value)) s = writer.Add(key, value);
  }
  if (s.ok()) s = writer.Finish().status();
  if (::close(fd) != 0 && s.ok()) s = Status::IOError("cannot write '" + out + "'");
  return s.WithContext("merging " + std::to_string(inputs.size()) + " segments into '" + out + "'");
}

}  // namespace

Result<std::vector<std::string>> MergeToFanIn(std::vector<std::string> files, int fan_in,
                                              const std::string& dir,
                                              const std::function<bool()>& cancelled) {
  std::vector<std::string> written;  // intermediate files still on disk
  auto fail = [&](Status s) {
    for (const std::string& f : written) ::unlink(f.c_str());
    return s;
  };
  size_t pos = 0;  // where the next group starts: passes sweep left to right
  for (int pass = MergePassSize(static_cast<int>(files.size()), fan_in); pass > 0;
       pass = MergePassSize(static_cast<int>(files.size()), fan_in)) {
    if (cancelled()) return fail(Status::Aborted("killed"));
    if (pos + static_cast<size_t>(pass) > files.size()) pos = 0;
    const auto first = files.begin() + static_cast<std::ptrdiff_t>(pos);
    const std::vector<std::string> group(first, first + pass);
    const std::string out = dir + "/merge-" + std::to_string(written.size());
    written.push_back(out);
    if (Status s = MergeInto(group, out); !s.ok()) return fail(s);
    for (const std::string& f : group) ::unlink(f.c_str());
    files.erase(first, first + pass);
    files.insert(files.begin() + static_cast<std::ptrdiff_t>(pos), out);
    ++pos;
  }
  return files;
}

}  // namespace mr::worker
