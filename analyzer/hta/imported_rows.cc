#include "analyzer/hta/imported_rows.h"

#include <filesystem>

namespace moetrace::hta {
namespace {

// "dir/a.json.gz" and "dir//a.json.gz" are one file.
std::string Key(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

}  // namespace

class ImportedRows::Observer : public KinetoEventObserver {
 public:
  // `owner` is null for the part of a file read on another thread (Fork).
  Observer(ImportedRows* owner, const std::string& path)
      : owner_(owner), key_(owner ? Key(path) : std::string()), builder_(path) {}
  void Restart() override { builder_.Restart(); }
  void OnEvent(const KinetoEventFacts& facts) override { builder_.Add(facts); }
  void Complete(std::string_view text) override {
    if (owner_) owner_->Completed(key_, this, builder_.Finish(FindRank(text)));
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
  e.rows.reset();  // a file read again starts over
  e.observer.reset();
  if (inflated && !gz_name) return nullptr;
  e.observer = std::make_unique<Observer>(this, path);
  return e.observer.get();
}

void ImportedRows::Completed(const std::string& key, const Observer* observer, RankRows rows) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(key);
    if (it != files_.end() && it->second.observer.get() == observer) it->second.rows = std::move(rows);
  }
  changed_.notify_all();
}

std::optional<RankRows> ImportedRows::Take(const std::string& path) {
  const std::string key = Key(path);
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] {
    auto it = files_.find(key);
    return closed_ || (it != files_.end() && it->second.rows);
  });
  auto it = files_.find(key);
  if (it == files_.end() || !it->second.rows) return std::nullopt;
  std::optional<RankRows> rows = std::move(it->second.rows);
  files_.erase(it);
  rows->file = path;  // as HTA's listing names it
  return rows;
}

void ImportedRows::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  changed_.notify_all();
}

}  // namespace moetrace::hta
