#pragma once
// Private to store*.cc and its tests: the schema's versions. Migration i (0-based) takes a
// database from user_version i to i + 1; the newest version is kMigrations.size(). Adding a
// table or column is one more entry here (never edit a released one).
#include <string>
#include <vector>

struct sqlite3;

namespace synk::harness::schema {

// 'synk' in ASCII: PRAGMA application_id of every synk-bench database.
inline constexpr int kApplicationId = 0x73796e6b;

extern const std::vector<std::string> kMigrations;
int latestVersion();

// Applies migrations from the file's version up to `target` in one transaction (also sets the
// application id on a new file).
void migrate(sqlite3* db, int target);

}  // namespace synk::harness::schema
