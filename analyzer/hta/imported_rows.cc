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
  explicit Observer(const std::string& path) : builder_(path) {}
  void Restart() override { builder_.Restart(); }
  void OnEvent(const KinetoEventFacts& facts) override { builder_.Add(facts); }
  void Complete(std::string_view text) override { rows_ = builder_.Finish(FindRank(text)); }
  std::unique_ptr<KinetoEventObserver> Fork() override {
    return std::make_unique<Observer>(std::string());
  }
  void Join(KinetoEventObserver& part, int64_t first_index) override {
    builder_.Append(static_cast<Observer&>(part).builder_, first_index);
  }
  std::optional<RankRows>& rows() { return rows_; }

 private:
  RowsBuilder builder_;
  std::optional<RankRows> rows_;
};

ImportedRows::ImportedRows() = default;
ImportedRows::~ImportedRows() = default;

KinetoEventObserver* ImportedRows::ObserverFor(const std::string& path, bool inflated) {
  const bool gz_name = path.size() >= 2 && path.compare(path.size() - 2, 2, "gz") == 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return nullptr;
  std::unique_ptr<Observer>& o = files_[Key(path)];
  if (inflated && !gz_name) {
    o.reset();
    return nullptr;
  }
  o = std::make_unique<Observer>(path);  // a file read again starts over
  return o.get();
}

std::optional<RankRows> ImportedRows::Take(const std::string& path) {
  std::unique_ptr<Observer> o;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(Key(path));
    if (it == files_.end()) return std::nullopt;
    o = std::move(it->second);
    files_.erase(it);
  }
  if (!o) return std::nullopt;
  std::optional<RankRows> rows = std::move(o->rows());
  if (rows) rows->file = path;  // as HTA's listing names it
  return rows;
}

void ImportedRows::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  files_.clear();
}

}  // namespace moetrace::hta
