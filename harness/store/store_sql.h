#pragma once
// Private to store*.cc: a thin RAII layer over SQLite's C API. Every failure throws naming the
// statement's purpose and SQLite's message; SQLITE_FULL and I/O errors become RunFailed (the
// disk, not the input, is at fault), the rest BadInput or RunFailed as the caller decides.
#include <sqlite3.h>

#include <cstddef>
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

// Inserts `count` rows, up to kRowsPerInsert in one statement: a million samples cost about
// 40 % less than one row a statement. `head` is the statement up to its rows ("INSERT INTO t
// (a, b) VALUES "), `row` one row's values with `columns` parameters ("(?,?)", or with NULLs
// spelled out); bind(statement, i, at) binds row i's values as parameters at + 1, at + 2, ...
inline constexpr size_t kRowsPerInsert = 128;
template <typename Bind>
void insertRows(sqlite3* db, const std::string& head, const std::string& row, int columns,
                size_t count, const Bind& bind) {
  auto text = [&](size_t rows) {
    std::string sql = head;
    for (size_t k = 0; k < rows; ++k)
      sql += (k ? "," : "") + row;
    return sql;
  };
  auto put = [&](Statement& insert, size_t begin, size_t rows) {
    for (size_t k = 0; k < rows; ++k)
      bind(insert, begin + k, static_cast<int>(k) * columns);
    insert.step();
    insert.reset();
  };
  size_t done = 0;
  if (count >= kRowsPerInsert) {
    Statement full(db, text(kRowsPerInsert).c_str());
    for (; done + kRowsPerInsert <= count; done += kRowsPerInsert)
      put(full, done, kRowsPerInsert);
  }
  if (done < count) {
    Statement rest(db, text(count - done).c_str());
    put(rest, done, count - done);
  }
}

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
