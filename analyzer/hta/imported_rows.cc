#include "analyzer/hta/imported_rows.h"

#include <filesystem>

namespace moetrace::hta {
// "dir/a.json.gz" and "dir//a.json.gz" are one file.
std::string ImportedRows::Key(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

class ImportedRows::Observer : public KinetoEventObserver {
 public:
  // `owner` is null for the part of a file read on another thread (Fork).
  Observer(ImportedRows* owner, const std::string& path)
      : owner_(owner), key_(owner ? Key(path) : std::string()), builder_(path) {}
  void Restart() override { builder_.Restart(); }
  void OnEvent(const KinetoEventFacts& facts) override { builder_.Add(facts); }
  void Complete(std::string_view text) override {
    if (owner_) owner_->Ended(key_, this, builder_.Finish(FindRank(text)));
  }
  void Incomplete() override {
    if (owner_) owner_->Ended(key_, this, std::nullopt);
  }
  std::unique_ptr<KinetoEventObserver> Fork() override {
    return std::make_unique<Observer>(nullptr, std::string());
  }
  void Join(KinetoEventObserver& part, int64_t first_index) override {
    builder_.Append(static_cast<Observer&>(part).builder_, first_index);
  }

 private:
  ImportedRows* owner_;
  std::string key_;
  RowsBuilder builder_;
};

ImportedRows::ImportedRows() = default;
ImportedRows::~ImportedRows() = default;

KinetoEventObserver* ImportedRows::ObserverFor(const std::string& path, bool inflated) {
  const bool gz_name = path.size() >= 2 && path.compare(path.size() - 2, 2, "gz") == 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return nullptr;
  Entry& e = files_[Key(path)];
  e = Entry();  // this read's outcome is the one that counts
  if (inflated && !gz_name) {
    e.ended = true;  // HTA reads it itself (and fails)
    ended_.push_back(Key(path));
    changed_.notify_all();
    return nullptr;
  }
  observers_.push_back(std::make_unique<Observer>(this, path));
  e.latest = observers_.back().get();
  return observers_.back().get();
}

void ImportedRows::Ended(const std::string& key, const Observer* observer,
                         std::optional<RankRows> rows) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(key);
    if (it == files_.end() || it->second.latest != observer) return;  // a later read counts
    it->second.ended = true;
    it->second.rows = std::move(rows);
    ended_.push_back(key);
  }
  changed_.notify_all();
}

std::optional<RankRows> ImportedRows::Take(const std::string& path) {
  const std::string key = Key(path);
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] {
    auto it = files_.find(key);
    return closed_ || (it != files_.end() && it->second.ended);
  });
  if (abandoned_) throw Abandoned();
  auto it = files_.find(key);
  if (it == files_.end() || !it->second.rows) return std::nullopt;
  std::optional<RankRows> rows = std::move(it->second.rows);
  files_.erase(it);
  rows->file = path;  // as HTA's listing names it
  return rows;
}

std::optional<std::string> ImportedRows::NextEnded() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return closed_ || !ended_.empty(); });
  if (abandoned_) throw Abandoned();
  if (ended_.empty()) return std::nullopt;
  std::string key = std::move(ended_.front());
  ended_.pop_front();
  return key;
}

void ImportedRows::Close(bool abandon) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    abandoned_ = abandoned_ || abandon;
  }
  changed_.notify_all();
}

}  // namespace moetrace::hta
