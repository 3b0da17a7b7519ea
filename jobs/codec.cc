// The codec-independent half of jobs/codec.h: names, the decode loop and
// CompressFile. The libraries' own code is in codec_libs.cc.
#include "jobs/codec.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace mr::jobs {

Codec CodecOfPath(std::string_view path) {
  if (path.ends_with(".gz")) return Codec::kGzip;
  if (path.ends_with(".zst")) return Codec::kZstd;
  if (path.ends_with(".bz2")) return Codec::kBzip2;
  return Codec::kNone;
}

const char* CodecName(Codec codec) {
  switch (codec) {
    case Codec::kGzip:
      return "gzip";
    case Codec::kZstd:
      return "zstd";
    case Codec::kBzip2:
      return "bzip2";
    case Codec::kNone:
      break;
  }
  return "none";
}

const char* CodecSuffix(Codec codec) {
  switch (codec) {
    case Codec::kGzip:
      return ".gz";
    case Codec::kZstd:
      return ".zst";
    case Codec::kBzip2:
      return ".bz2";
    case Codec::kNone:
      break;
  }
  return "";
}

Result<Codec> ParseOutputCompression(std::string_view name) {
  if (name.empty() || name == "none") return Codec::kNone;
  if (name == "gzip") return Codec::kGzip;
  if (name == "zstd") return Codec::kZstd;
  return Status::InvalidArgument("output compression must be one of none, gzip, zstd, not '" +
                                 std::string(name) + "'");
}

Status Decoder::Decode(std::string_view* in, char* out, size_t room, size_t* produced) {
  *produced = 0;
  while (*produced < room) {
    const Step step = Run(*in, out + *produced, room - *produced);
    in->remove_prefix(step.consumed);
    *produced += step.produced;
    if (step.unit_ended) {
      in_unit_ = false;
    } else if (step.consumed > 0) {
      in_unit_ = true;
    }
    MR_RETURN_IF_ERROR(step.status);
    if (step.consumed == 0 && step.produced == 0 && !step.unit_ended) break;  // wants input
  }
  return Status::OK();
}

std::string DecodePrefix(Codec codec, std::string_view compressed, size_t max_bytes) {
  std::string out(max_bytes, '\0');
  size_t produced = 0;
  (void)Decoder::Make(codec)->Decode(&compressed, out.data(), max_bytes, &produced);
  out.resize(produced);
  return out;
}

Status CompressFile(Codec codec, const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) return Status::IOError("cannot open '" + from + "': " + std::strerror(errno));
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IOError("cannot create '" + to + "': " + std::strerror(errno));
  std::unique_ptr<Encoder> encoder = Encoder::Make(codec);
  std::string buf(1 << 20, '\0');
  std::string packed;
  for (;;) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0 && in.bad()) return Status::IOError("cannot read '" + from + "'");
    packed.clear();
    if (got > 0) MR_RETURN_IF_ERROR(encoder->Write(std::string_view(buf.data(), got), &packed));
    const bool last = got < buf.size();
    if (last) MR_RETURN_IF_ERROR(encoder->Finish(&packed));
    out.write(packed.data(), static_cast<std::streamsize>(packed.size()));
    if (!out) return Status::IOError("cannot write '" + to + "'");
    if (last) break;
  }
  out.close();
  if (!out) return Status::IOError("cannot write '" + to + "'");
  return Status::OK();
}

}  // namespace mr::jobs
