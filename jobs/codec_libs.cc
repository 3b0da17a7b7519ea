// The decoders and encoders of jobs/codec.h over the libraries: zlib
// (gzip), libzstd and libbz2. Each Run() is one call of the library.
#include <bzlib.h>
#include <zlib.h>
#include <zstd.h>

#include <climits>

#include "jobs/codec.h"

namespace mr::jobs {
namespace {

// The most one library call is given: zlib and libbz2 count in unsigned int.
constexpr size_t kMaxCall = UINT_MAX / 2;

// gzip members, one after another (inflate with a gzip header only, reset
// after each member's trailer).
class GzipDecoder final : public Decoder {
 public:
  GzipDecoder() { ok_ = inflateInit2(&z_, 16 + MAX_WBITS) == Z_OK; }
  ~GzipDecoder() override { inflateEnd(&z_); }

 private:
  Step Run(std::string_view in, char* out, size_t room) override {
    Step step;
    if (!ok_) {
      step.status = Status::Internal("zlib: cannot initialize inflate");
      return step;
    }
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(std::min(in.size(), kMaxCall));
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(std::min(room, kMaxCall));
    const uInt in_before = z_.avail_in, out_before = z_.avail_out;
    const int rc = inflate(&z_, Z_NO_FLUSH);
    step.consumed = in_before - z_.avail_in;
    step.produced = out_before - z_.avail_out;
    if (rc == Z_STREAM_END) {
      step.unit_ended = true;
      inflateReset(&z_);
    } else if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR) {
      step.status = Status::Corruption(z_.msg != nullptr ? z_.msg : "invalid deflate data");
    } else if (rc == Z_MEM_ERROR) {
      step.status = Status::Internal("zlib: out of memory");
    }  // Z_OK, or Z_BUF_ERROR: no progress without more input
    return step;
  }

  z_stream z_{};
  bool ok_ = false;
};

// zstd frames, one after another (ZSTD_decompressStream starts the next
// frame by itself; it returns 0 when a frame is complete and flushed).
class ZstdDecoder final : public Decoder {
 public:
  ZstdDecoder() : d_(ZSTD_createDCtx()) {}
  ~ZstdDecoder() override { ZSTD_freeDCtx(d_); }

 private:
  // On an error libzstd leaves ib.pos where the call began, not where it
  // found the damage: the error is then placed at the end of what the call
  // was given, which is why a call is given at most ZSTD_DStreamInSize()
  // bytes (one block and its header), as zstd's own tool reads them.
  Step Run(std::string_view in, char* out, size_t room) override {
    Step step;
    ZSTD_inBuffer ib{in.data(), std::min(in.size(), kInSize), 0};
    ZSTD_outBuffer ob{out, room, 0};
    const size_t rc = ZSTD_decompressStream(d_, &ob, &ib);
    step.consumed = ib.pos;
    step.produced = ob.pos;
    if (ZSTD_isError(rc)) {
      step.consumed = ib.size;  // the damage is at or before here
      step.status = Status::Corruption(ZSTD_getErrorName(rc));
    } else if (rc == 0 && (ib.pos > 0 || ob.pos > 0)) {
      step.unit_ended = true;
    }
    return step;
  }

  const size_t kInSize = ZSTD_DStreamInSize();
  ZSTD_DCtx* d_;
};

// bzip2 streams, one after another (as pbzip2 writes them): the stream
// state is made afresh after each end-of-stream marker.
class Bzip2Decoder final : public Decoder {
 public:
  Bzip2Decoder() { Start(); }
  ~Bzip2Decoder() override { BZ2_bzDecompressEnd(&bz_); }

 private:
  void Start() {
    bz_ = bz_stream{};
    ok_ = BZ2_bzDecompressInit(&bz_, 0, 0) == BZ_OK;
  }

  Step Run(std::string_view in, char* out, size_t room) override {
    Step step;
    if (!ok_) {
      step.status = Status::Internal("libbz2: cannot initialize the decompressor");
      return step;
    }
    bz_.next_in = const_cast<char*>(in.data());
    bz_.avail_in = static_cast<unsigned>(std::min(in.size(), kMaxCall));
    bz_.next_out = out;
    bz_.avail_out = static_cast<unsigned>(std::min(room, kMaxCall));
    const unsigned in_before = bz_.avail_in, out_before = bz_.avail_out;
    const int rc = BZ2_bzDecompress(&bz_);
    step.consumed = in_before - bz_.avail_in;
    step.produced = out_before - bz_.avail_out;
    if (rc == BZ_STREAM_END) {
      step.unit_ended = true;
      BZ2_bzDecompressEnd(&bz_);
      Start();
    } else if (rc == BZ_DATA_ERROR || rc == BZ_DATA_ERROR_MAGIC) {
      step.status = Status::Corruption(rc == BZ_DATA_ERROR_MAGIC ? "not a bzip2 stream"
                                                                 : "invalid bzip2 data");
    } else if (rc != BZ_OK) {
      step.status = Status::Internal("libbz2: error " + std::to_string(rc));
    }
    return step;
  }

  bz_stream bz_{};
  bool ok_ = false;
};

// One gzip member (deflate with a gzip header).
class GzipEncoder final : public Encoder {
 public:
  explicit GzipEncoder(int level) {
    ok_ = deflateInit2(&z_, level > 0 ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                       Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~GzipEncoder() override { deflateEnd(&z_); }

  Status Write(std::string_view data, std::string* out) override { return Deflate(data, Z_NO_FLUSH, out); }
  Status Finish(std::string* out) override { return Deflate({}, Z_FINISH, out); }

 private:
  Status Deflate(std::string_view data, int flush, std::string* out) {
    if (!ok_) return Status::Internal("zlib: cannot initialize deflate");
    char buf[64 << 10];
    while (!data.empty() || flush == Z_FINISH) {
      const size_t n = std::min(data.size(), kMaxCall);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      z_.avail_in = static_cast<uInt>(n);
      const int f = n == data.size() ? flush : Z_NO_FLUSH;
      int rc;
      do {
        z_.next_out = reinterpret_cast<Bytef*>(buf);
        z_.avail_out = sizeof buf;
        rc = deflate(&z_, f);
        if (rc == Z_STREAM_ERROR) return Status::Internal("zlib: deflate failed");
        out->append(buf, sizeof buf - z_.avail_out);
      } while (z_.avail_out == 0);
      data.remove_prefix(n);
      if (rc == Z_STREAM_END || (f == Z_NO_FLUSH && data.empty())) break;
    }
    return Status::OK();
  }

  z_stream z_{};
  bool ok_ = false;
};

// One zstd frame.
class ZstdEncoder final : public Encoder {
 public:
  explicit ZstdEncoder(int level) : c_(ZSTD_createCCtx()) {
    ZSTD_CCtx_setParameter(c_, ZSTD_c_compressionLevel, level > 0 ? level : ZSTD_CLEVEL_DEFAULT);
    ZSTD_CCtx_setParameter(c_, ZSTD_c_checksumFlag, 1);
  }
  ~ZstdEncoder() override { ZSTD_freeCCtx(c_); }

  Status Write(std::string_view data, std::string* out) override {
    return Compress(data, ZSTD_e_continue, out);
  }
  Status Finish(std::string* out) override { return Compress({}, ZSTD_e_end, out); }

 private:
  Status Compress(std::string_view data, ZSTD_EndDirective mode, std::string* out) {
    char buf[64 << 10];
    ZSTD_inBuffer ib{data.data(), data.size(), 0};
    for (;;) {
      ZSTD_outBuffer ob{buf, sizeof buf, 0};
      const size_t left = ZSTD_compressStream2(c_, &ob, &ib, mode);
      if (ZSTD_isError(left)) return Status::Internal(std::string("zstd: ") + ZSTD_getErrorName(left));
      out->append(buf, ob.pos);
      if (mode == ZSTD_e_end ? left == 0 : ib.pos == ib.size) return Status::OK();
    }
  }

  ZSTD_CCtx* c_;
};

}  // namespace

std::unique_ptr<Decoder> Decoder::Make(Codec codec) {
  switch (codec) {
    case Codec::kGzip:
      return std::make_unique<GzipDecoder>();
    case Codec::kZstd:
      return std::make_unique<ZstdDecoder>();
    case Codec::kBzip2:
      return std::make_unique<Bzip2Decoder>();
    case Codec::kNone:
      break;
  }
  return nullptr;
}

std::unique_ptr<Encoder> Encoder::Make(Codec codec, int level) {
  if (codec == Codec::kGzip) return std::make_unique<GzipEncoder>(level);
  if (codec == Codec::kZstd) return std::make_unique<ZstdEncoder>(level);
  return nullptr;
}

}  // namespace mr::jobs
