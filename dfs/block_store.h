// BlockStore: a worker's replicas on local disk.
//
// Layout under `dir`:
//   blocks/<id % 256 as 2 hex digits>/blk_<id in 16 hex digits>   the bytes
//   tmp/blk_<id>.<random>                                          being written
//   meta/                                                          RocksDB
// RocksDB key: "b" + id as 8 big-endian bytes. Value: proto mr.pb.BlockMeta
// (length, chunk_bytes, one XXH3-64 checksum per 64 KiB chunk, the last
// chunk possibly short, and the quarantine mark). A block exists when its
// metadata does; Open() deletes block files without metadata, metadata
// without a file or with a file of the wrong length, and everything in
// tmp/, and lists what it dropped in dropped_at_open().
//
// Every read verifies the checksums of the chunks it touches; a mismatch
// returns Corruption. The caller (the worker) then quarantines the replica:
// Quarantine() marks it in its metadata and keeps the file. A quarantined
// replica is still read like any other (each chunk verified, so its good
// chunks serve readers and repairs as a last resort), is listed with its
// mark, and is replaced by a new writer of the same id once a good copy has
// been fetched (docs/dfs.md, "A replica is corrupt").
//
// Thread-safe: all methods may be called from several threads. Writers of
// different blocks proceed in parallel; a BlockWriter itself is used by one
// thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace mr::dfs {

inline constexpr int64_t kChecksumChunkBytes = 64 * 1024;

// XXH3-64 of `data`.
uint64_t ChunkChecksum(std::span<const char> data);
// Checksums of consecutive kChecksumChunkBytes chunks of `data` (last may be short).
std::vector<uint64_t> ChunkChecksums(std::span<const char> data);
// Checksums of `data`, which starts at byte `offset` of a block, cut at the
// block's kChecksumChunkBytes boundaries: one per piece, the first and last
// possibly short. The checksums of a dn.ReadBlock frame (docs/wire-format.md);
// equal to ChunkChecksums(data) when `offset` is a chunk boundary.
// REQUIRES: offset >= 0.
std::vector<uint64_t> RangeChecksums(int64_t offset, std::span<const char> data);

struct StoredBlock {
  uint64_t id = 0;
  int64_t bytes = 0;
  bool quarantined = false;
};

// A block Open() dropped, and why: "missing", "length X expected Y", "bad
// metadata", "no metadata" (a block file without its metadata).
struct DroppedBlock {
  uint64_t id = 0;
  std::string reason;
};

class BlockStore;

// Reads one block for a stream of reads (the block server's dn.ReadBlock):
// its file is opened once, and the reads verify against the block's
// metadata as it was at OpenReader(). The file stays readable for the
// reader's life even if the replica is removed or replaced meanwhile (a
// repair renames a new file over it), so a stream never changes file
// mid-way. Used by one thread at a time.
class BlockReader {
 public:
  ~BlockReader();
  int64_t length() const;
  // As BlockStore::ReadChunks, for this block.
  Status ReadChunks(int64_t offset, int64_t length, std::string* out,
                    std::vector<uint64_t>* checksums);
  // The open block file, for sending bytes ReadChunks() has verified
  // without copying them again (sendfile). Valid while the reader lives.
  int fd() const;

 private:
  friend class BlockStore;
  struct Impl;
  explicit BlockReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes one block. Append() chunks in order, then Commit(); destroying an
// uncommitted writer removes its temporary file (the block never appears).
class BlockWriter {
 public:
  ~BlockWriter();
  // Appends bytes. `checksums`, if not empty, are the expected checksums of
  // the kChecksumChunkBytes chunks that `data` consists of; the data is
  // verified against them (Corruption on mismatch). REQUIRES: every append
  // except the last is a multiple of kChecksumChunkBytes long.
  Status Append(std::span<const char> data, std::span<const uint64_t> checksums = {});
  // Makes the block visible: fsync if asked, rename into place, write
  // metadata. AlreadyExists if a good block with this id is already stored;
  // a quarantined one is replaced (its file and metadata at once).
  Status Commit();
  int64_t bytes_written() const;

 private:
  friend class BlockStore;
  struct Impl;
  explicit BlockWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class BlockStore {
 public:
  struct Options {
    bool fsync = false;           // fsync block files on Commit()
    int64_t capacity_bytes = 0;   // 0 = unlimited; NewWriter fails when full
  };

  // Opens (creating if needed) the store in `dir` and reconciles files with
  // metadata as described above.
  static Result<std::unique_ptr<BlockStore>> Open(const std::string& dir, const Options& options);
  ~BlockStore();

  // Starts writing block `id`. AlreadyExists if it is stored and not
  // quarantined (a quarantined replica may be rewritten: the repair); IOError
  // if the store is over capacity (never for a repair, which frees as much
  // as it takes).
  Result<std::unique_ptr<BlockWriter>> NewWriter(uint64_t id);

  // Reads [offset, offset+length) of block `id` into `out` (resized to the
  // bytes read; fewer than `length` only at the block's end), verifying every
  // chunk touched. NotFound if the block is not stored; Corruption on a
  // checksum mismatch; InvalidArgument if offset > length of block.
  Status Read(uint64_t id, int64_t offset, int64_t length, std::string* out);

  // Like Read(), but also returns the checksums a dn.ReadBlock frame of *out
  // carries, for a reader that verifies end to end: one per piece of the
  // range cut at chunk boundaries (RangeChecksums' cut), the stored checksum
  // for a piece that is a whole chunk, else the checksum of the piece's
  // bytes, computed after its whole chunk was read and verified. Any offset;
  // a range inside one chunk still verifies that whole chunk. The worker's
  // block server calls it for each frame, through a BlockReader.
  Status ReadChunks(uint64_t id, int64_t offset, int64_t length, std::string* out,
                    std::vector<uint64_t>* checksums);

  // Opens block `id` for a stream of reads. NotFound if it is not stored;
  // Corruption if its file is missing.
  Result<std::unique_ptr<BlockReader>> OpenReader(uint64_t id);

  // Length of block `id`, or NotFound.
  Result<int64_t> Length(uint64_t id);
  bool Contains(uint64_t id);
  // True if block `id` is stored and quarantined.
  bool IsQuarantined(uint64_t id);

  // Removes block `id` (file and metadata). Removing a missing block is not
  // an error.
  Status Remove(uint64_t id);

  // Marks block `id` quarantined (durably, in its metadata) and keeps its
  // file. Returns true if it was not quarantined before, false if it was.
  // NotFound if the block is not stored. Called by the worker when a read
  // or the scrubber finds a bad chunk.
  Result<bool> Quarantine(uint64_t id, const std::string& reason);

  // Every stored block, sorted by id, quarantined ones marked: the full
  // block report.
  std::vector<StoredBlock> List();

  // The blocks Open() dropped (for the worker to log and for tests).
  const std::vector<DroppedBlock>& dropped_at_open() const;

  // Bytes of all stored blocks.
  int64_t used_bytes();

  // Path of the block file of `id` (for tests that flip bytes on disk).
  std::string BlockPath(uint64_t id) const;

 private:
  friend class BlockWriter;
  struct Impl;
  explicit BlockStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mr::dfs
