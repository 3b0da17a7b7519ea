#include "master/job_history.h"

#include <cinttypes>
#include <cstdio>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "master/job_summary.h"

namespace mr::master {
namespace {

constexpr char kJobPrefix[] = "job/";
constexpr char kFpPrefix[] = "fp/";
constexpr char kNextIdKey[] = "next_job_id";
constexpr char kSchedulerKey[] = "scheduler";
constexpr char kTaskPrefix[] = "task/";
constexpr char kBriefPrefix[] = "brief/";
constexpr char kBriefsWrittenKey[] = "briefs";

std::string IdKey(const char* prefix, int64_t id) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s%016" PRIx64, prefix, static_cast<uint64_t>(id));
  return buf;
}

std::string JobKey(int64_t id) { return IdKey(kJobPrefix, id); }

// "task/<16 hex>/" : every task key of one job starts so.
std::string TaskPrefix(int64_t job) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s%016" PRIx64 "/", kTaskPrefix, static_cast<uint64_t>(job));
  return buf;
}

// kind: "m" a map's record, "r" a reduce's, "p" an attempt's place.
std::string TaskKey(int64_t job, const char* kind, int32_t index) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%s/%08x", kind, static_cast<uint32_t>(index));
  return TaskPrefix(job) + buf;
}

// Appends every value under `prefix` to `list` as one more element.
template <typename Message>
void ScanInto(rocksdb::DB& db, const std::string& prefix,
              google::protobuf::RepeatedPtrField<Message>* list) {
  Scan(db, prefix, [&](const std::string& value) {
    if (!list->Add()->ParseFromString(value)) list->RemoveLast();
  });
}

std::string FpKey(const std::string& code_hash, const std::string& input_type) {
  return kFpPrefix + code_hash + "/" + input_type;
}

// Calls fn(value) for every key starting with `prefix`, in key order.
template <typename Fn>
void Scan(rocksdb::DB& db, const std::string& prefix, Fn fn) {
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    fn(it->value().ToString());
  }
}

// Every readable value under `prefix`, in key order (an unreadable one is
// skipped: Get reports it).
template <typename Message>
std::vector<Message> ParseAll(rocksdb::DB& db, const std::string& prefix) {
  std::vector<Message> out;
  Scan(db, prefix, [&](const std::string& value) {
    if (!out.emplace_back().ParseFromString(value)) out.pop_back();
  });
  return out;
}

}  // namespace

JobHistory::~JobHistory() = default;

Result<std::unique_ptr<JobHistory>> JobHistory::Open(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  if (!s.ok()) return Status::IOError("cannot open job history in '" + dir + "': " + s.ToString());
  std::unique_ptr<JobHistory> h(new JobHistory());
  h->db_.reset(raw);
  std::string next;
  if (h->db_->Get(rocksdb::ReadOptions(), kNextIdKey, &next).ok()) {
    h->next_id_ = std::stoll(next);
  }
  MR_RETURN_IF_ERROR(h->WriteMissingBriefs());
  return h;
}

Status JobHistory::Write(const std::string& key, const std::string& value) {
  rocksdb::WriteOptions sync;
  sync.sync = true;
  rocksdb::Status s = db_->Put(sync, key, value);
  if (!s.ok()) return Status::IOError("job history: " + s.ToString());
  return Status::OK();
}

Result<int64_t> JobHistory::NextJobId() {
  const int64_t id = next_id_;
  MR_RETURN_IF_ERROR(Write(kNextIdKey, std::to_string(id + 1)));
  next_id_ = id + 1;
  return id;
}

Status JobHistory::Commit(rocksdb::WriteBatch& batch, bool sync) {
  rocksdb::WriteOptions options;
  options.sync = sync;
  rocksdb::Status s = db_->Write(options, &batch);
  if (!s.ok()) return Status::IOError("job history: " + s.ToString());
  return Status::OK();
}

Status JobHistory::WriteMissingBriefs() {
  std::string done;
  if (db_->Get(rocksdb::ReadOptions(), kBriefsWrittenKey, &done).ok()) return Status::OK();
  rocksdb::WriteBatch batch;
  Scan(*db_, kJobPrefix, [&](const std::string& value) {
    pb::JobRecord r;
    if (r.ParseFromString(value) && r.state() != "running") {
      batch.Put(IdKey(kBriefPrefix, r.id()), ListEntry(r).SerializeAsString());
    }
  });
  batch.Put(kBriefsWrittenKey, "1");
  return Commit(batch);
}

Status JobHistory::Put(const pb::JobRecord& record) {
  if (record.state() == "running") return Write(JobKey(record.id()), record.SerializeAsString());
  rocksdb::WriteBatch batch;
  batch.Put(JobKey(record.id()), record.SerializeAsString());
  batch.Put(IdKey(kBriefPrefix, record.id()), ListEntry(record).SerializeAsString());
  const std::string prefix = TaskPrefix(record.id());
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    batch.Delete(it->key());
  }
  return Commit(batch);
}

Status JobHistory::PutProgress(const pb::JobRecord& header, const pb::MapTaskRecord* map,
                               const pb::ReduceTaskRecord* reduce, NewPlaces places, bool sync) {
  const int64_t id = header.id();
  rocksdb::WriteBatch batch;
  batch.Put(JobKey(id), header.SerializeAsString());
  if (map != nullptr) batch.Put(TaskKey(id, "m", map->index()), map->SerializeAsString());
  if (reduce != nullptr) batch.Put(TaskKey(id, "r", reduce->index()), reduce->SerializeAsString());
  if (places.places != nullptr) {
    for (int i = places.from; i < places.places->size(); ++i) {
      batch.Put(TaskKey(id, "p", i), places.places->Get(i).SerializeAsString());
    }
  }
  return Commit(batch, sync);
}

void JobHistory::LoadTasks(pb::JobRecord* record) const {
  const std::string prefix = TaskPrefix(record->id());
  ScanInto(*db_, prefix + "m/", record->mutable_maps());
  ScanInto(*db_, prefix + "r/", record->mutable_reduces());
  ScanInto(*db_, prefix + "p/", record->mutable_attempt_places());
}

Result<pb::JobRecord> JobHistory::Get(int64_t id) const {
  std::string value;
  if (!db_->Get(rocksdb::ReadOptions(), JobKey(id), &value).ok()) {
    return Status::NotFound("no job " + std::to_string(id));
  }
  pb::JobRecord record;
  if (!record.ParseFromString(value)) return Status::Corruption("job history: bad record " + std::to_string(id));
  return record;
}

std::vector<pb::JobRecord> JobHistory::List() const { return ParseAll<pb::JobRecord>(*db_, kJobPrefix); }

std::vector<pb::JobRecord> JobHistory::Briefs() const {
  return ParseAll<pb::JobRecord>(*db_, kBriefPrefix);
}

std::optional<pb::FpRow> JobHistory::Fp(const std::string& code_hash,
                                         const std::string& input_type) const {
  std::string value;
  pb::FpRow row;
  if (!db_->Get(rocksdb::ReadOptions(), FpKey(code_hash, input_type), &value).ok() ||
      !row.ParseFromString(value)) {
    return std::nullopt;
  }
  return row;
}

Status JobHistory::AddFp(const std::string& job, const std::string& code_hash,
                         const std::string& input_type, double fp_raw, double fp_wire) {
  pb::FpRow row = Fp(code_hash, input_type).value_or(pb::FpRow());
  row.set_job(job);
  row.set_code_hash(code_hash);
  row.set_input_type(input_type);
  const double n = static_cast<double>(row.jobs() + 1);
  row.set_fp_raw(row.fp_raw() + (fp_raw - row.fp_raw()) / n);
  row.set_fp_wire(row.fp_wire() + (fp_wire - row.fp_wire()) / n);
  row.set_jobs(row.jobs() + 1);
  return Write(FpKey(code_hash, input_type), row.SerializeAsString());
}

std::vector<pb::FpRow> JobHistory::FpTable() const { return ParseAll<pb::FpRow>(*db_, kFpPrefix); }

std::optional<pb::SchedulerChoice> JobHistory::Scheduler() const {
  std::string value;
  if (!db_->Get(rocksdb::ReadOptions(), kSchedulerKey, &value).ok()) return std::nullopt;
  pb::SchedulerChoice choice;
  if (!choice.ParseFromString(value)) return std::nullopt;
  return choice;
}

Status JobHistory::PutScheduler(const pb::SchedulerChoice& choice) {
  return Write(kSchedulerKey, choice.SerializeAsString());
}

}  // namespace mr::master
