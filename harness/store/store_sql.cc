#include "synk/harness/store/store_sql.h"

#include <cstring>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/strings.h"

namespace synk::harness::sql {

void check(sqlite3* db, int rc, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  const std::string message =
      std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  const int primary = rc & 0xff;
  if (primary == SQLITE_FULL || primary == SQLITE_IOERR || primary == SQLITE_BUSY ||
      primary == SQLITE_LOCKED || primary == SQLITE_READONLY) {
    throw RunFailed(message);
  }
  throw BadInput(message);
}

void exec(sqlite3* db, const std::string& sql, std::string_view what) {
  check(db, sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), what);
}

int64_t queryInt(sqlite3* db, const std::string& sql, std::string_view what) {
  sqlite3_stmt* stmt = nullptr;
  check(db, sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), what);
  const int rc = sqlite3_step(stmt);
  const int64_t value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
  sqlite3_finalize(stmt);
  check(db, rc, what);
  return value;
}

Statement::Statement(sqlite3* db, const char* sql) : db_(db) {
  // "INSERT INTO sample (rowid, ...": enough to tell which statement failed.
  std::string text(sql, strnlen(sql, 120));
  for (char& c : text)
    c = c == '\n' ? ' ' : c;
  what_ = std::string(trim(text)) + (text.size() == 120 ? " ..." : "");
  check(db, sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr), what_);
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, int64_t value) {
  check(db_, sqlite3_bind_int64(stmt_, index, value), what_);
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  check(db_,
        sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                          SQLITE_TRANSIENT),
        what_);
  return *this;
}

Statement& Statement::bindNull(int index) {
  check(db_, sqlite3_bind_null(stmt_, index), what_);
  return *this;
}

Statement& Statement::bindReal(int index, double value) {
  check(db_, sqlite3_bind_double(stmt_, index, value), what_);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  check(db_, rc, what_);
  return rc == SQLITE_ROW;
}

void Statement::reset() {
  sqlite3_reset(stmt_);
}

int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::string Statement::text(int column) const {
  const unsigned char* s = sqlite3_column_text(stmt_, column);
  return s ? std::string(reinterpret_cast<const char*>(s),
                         static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
           : std::string();
}

double Statement::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

bool Statement::isNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

Transaction::Transaction(sqlite3* db) : db_(db) {
  exec(db, "BEGIN IMMEDIATE", "starting a transaction");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, "COMMIT", "committing");
  done_ = true;
}

}  // namespace synk::harness::sql
