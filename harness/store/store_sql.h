#pragma once
// Private to store*.cc: a thin RAII layer over SQLite's C API. Every failure throws naming the
// statement's purpose and SQLite's message; SQLITE_FULL and I/O errors become RunFailed (the
// disk, not the input, is at fault), the rest BadInput or RunFailed as the caller decides.
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace synk::harness::sql {

// Throws for rc (not SQLITE_OK / ROW / DONE), naming `what`.
void check(sqlite3* db, int rc, std::string_view what);
// Runs statements without results.
void exec(sqlite3* db, const std::string& sql, std::string_view what);
// The single integer `sql` returns (e.g. PRAGMA user_version).
int64_t queryInt(sqlite3* db, const std::string& sql, std::string_view what);

class Statement {
 public:
  Statement(sqlite3* db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, const std::string& value);
  Statement& bindNull(int index);
  Statement& bindReal(int index, double value);
  // Steps once: true while there is a row.
  bool step();
  // For reuse: clears the row state (bindings stay).
  void reset();

  int64_t integer(int column) const;
  std::string text(int column) const;
  double real(int column) const;
  bool isNull(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string what_;  // the statement's start, for messages
};

// BEGIN IMMEDIATE ... COMMIT, rolled back if not committed. IMMEDIATE takes the write lock at
// the start, so two writers queue on the busy timeout instead of deadlocking on an upgrade.
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  void commit();

 private:
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace synk::harness::sql
