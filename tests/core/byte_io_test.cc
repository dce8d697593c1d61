// core/byte_io.h without a session: values and the serialised structs (their one fields() list)
// survive a write and a read; truncated or corrupt input is refused, never read past its end.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "synk/core/byte_io.h"
#include "synk/core/error.h"
#include "synk/core/step/call_request.h"
#include "synk/core/step/collective_request.h"
#include "synk/core/step/distribute.h"

namespace synk {
namespace {

using detail::CallInput;
using detail::CallRequest;
using detail::CollectiveKind;
using detail::CollectiveRequest;
using detail::DistributedModel;
using detail::DistributeRequest;
using detail::FunctionBinding;

template <typename T>
std::vector<std::byte> bytesOf(const T& value) {
  ByteWriter out;
  out.write(value);
  return {out.data(), out.data() + out.size()};
}

// Writes, reads back, and checks that the read took every byte.
template <typename T>
T roundTrip(const T& value) {
  const std::vector<std::byte> bytes = bytesOf(value);
  ByteReader in(bytes.data(), bytes.size());
  T back = in.read<T>();
  CHECK(in.remaining() == 0);
  return back;
}

CallInput someInput(uint64_t seed) {
  CallInput input;
  input.blob = {seed, seed + 1, 4096 * seed};
  input.dtype = DType::BFloat16;
  input.shape = {static_cast<int64_t>(seed), 3, 5};
  input.minibatch = 1;
  input.device_resident = 1;
  input.version = 1000 + seed;
  return input;
}

void checkSameInput(const CallInput& a, const CallInput& b) {
  CHECK(a.blob.id == b.blob.id);
  CHECK(a.blob.generation == b.blob.generation);
  CHECK(a.blob.bytes == b.blob.bytes);
  CHECK(a.dtype == b.dtype);
  CHECK(a.shape == b.shape);
  CHECK(a.minibatch == b.minibatch);
  CHECK(a.device_resident == b.device_resident);
  CHECK(a.version == b.version);
}

CallRequest someCallRequest() {
  CallRequest request;
  request.function = 7;
  request.inputs = {someInput(1), someInput(2)};
  request.batch = Selection::indices({5, 1, 5});
  request.batch_s = {Selection::range(0, 2), Selection::count(3)};
  request.num_slices = 4;
  request.batch_rows = 3;
  request.wanted = {1, 0, 1};
  return request;
}

TEST_CASE("byte I/O: values of every supported form come back in order", "[core]") {
  ByteWriter out;
  const std::map<std::string, std::string> options = {{"width", "64"}, {"", "empty key"}};
  const std::vector<std::vector<int64_t>> shapes = {{}, {3}, {2, 4}};
  out(int32_t{-5}, 2.5, std::string("naïve"), std::string(), std::vector<float>{1.5f, -0.f},
      std::vector<std::string>{"a", "", "ccc"}, options, shapes, uint8_t{255});
  ByteReader in(out.data(), out.size());
  CHECK(in.read<int32_t>() == -5);
  CHECK(in.read<double>() == 2.5);
  CHECK(in.read<std::string>() == "naïve");
  CHECK(in.read<std::string>().empty());
  const auto floats = in.read<std::vector<float>>();
  REQUIRE(floats.size() == 2);
  CHECK(floats[0] == 1.5f);
  CHECK(std::signbit(floats[1]));
  CHECK(in.read<std::vector<std::string>>() == std::vector<std::string>{"a", "", "ccc"});
  CHECK((in.read<std::map<std::string, std::string>>() == options));
  CHECK(in.read<std::vector<std::vector<int64_t>>>() == shapes);
  CHECK(in.read<uint8_t>() == 255);
  CHECK(in.remaining() == 0);
}

TEST_CASE("byte I/O: vectorBytes is what putVector writes", "[core]") {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}}) {
    ByteWriter ids, floats;
    ids.putVector(std::vector<uint64_t>(n, 3));
    floats.putVector(std::vector<float>(n, 1.f));
    CHECK(ByteWriter::vectorBytes<uint64_t>(n) == ids.size());
    CHECK(ByteWriter::vectorBytes<float>(n) == floats.size());
  }
}

TEST_CASE("byte I/O: in-place reads with cursor and skip", "[core]") {
  ByteWriter out;
  const char text[] = "abcdef";
  out.put<uint32_t>(6);
  out.append(text, 6);
  out.put<uint16_t>(0xbeef);
  ByteReader in(out.data(), out.size());
  REQUIRE(in.get<uint32_t>() == 6);
  CHECK(std::memcmp(in.cursor(), text, 6) == 0);
  in.skip(6);
  CHECK(in.get<uint16_t>() == 0xbeef);
  CHECK_THROWS_AS(in.skip(1), InternalError);
  out.clear();
  CHECK(out.size() == 0);
}

TEST_CASE("serialised structs: every field of fields() survives", "[core]") {
  SECTION("CallInput and CallRequest") {
    const CallRequest request = someCallRequest();
    const CallRequest back = roundTrip(request);
    CHECK(back.function == 7);
    REQUIRE(back.inputs.size() == 2);
    checkSameInput(back.inputs[0], request.inputs[0]);
    checkSameInput(back.inputs[1], request.inputs[1]);
    CHECK(back.batch.rows() == std::vector<int64_t>{5, 1, 5});
    REQUIRE(back.batch_s.size() == 2);
    CHECK(back.batch_s[0].describe() == "rows [0, 2)");
    CHECK(back.batch_s[1].describe() == "the first 3 rows");
    CHECK(back.num_slices == 4);
    CHECK(back.batch_rows == 3);
    CHECK(back.wanted == std::vector<uint8_t>{1, 0, 1});
    CHECK_FALSE(back.wants(1));
  }
  SECTION("CollectiveRequest") {
    CollectiveRequest request;
    request.kind = CollectiveKind::Gather;
    request.vars = {{1, 2}, {3, 4}};
    request.op = ReduceOp::Max;
    request.in_place = 1;
    request.nd_up = 0;
    request.native = 0;
    request.shapes_known = 1;
    request.rank = 3;
    request.values = {someInput(9)};
    request.batch = Selection::range(4, 6);
    request.shapes = {{2, 3}, {}};
    const CollectiveRequest back = roundTrip(request);
    CHECK(back.kind == CollectiveKind::Gather);
    REQUIRE(back.vars.size() == 2);
    CHECK(back.vars[1].model == 3);
    CHECK(back.vars[1].index == 4);
    CHECK(back.op == ReduceOp::Max);
    CHECK(back.in_place == 1);
    CHECK(back.nd_up == 0);
    CHECK(back.native == 0);
    CHECK(back.shapes_known == 1);
    CHECK(back.rank == 3);
    REQUIRE(back.values.size() == 1);
    checkSameInput(back.values[0], request.values[0]);
    CHECK(back.batch.describe() == "rows [4, 6)");
    CHECK(back.shapes == std::vector<Shape>{{2, 3}, {}});
  }
  SECTION("DistributeRequest: models and function bindings") {
    DistributeRequest request;
    DistributedModel model;
    model.id = 2;
    model.path = "/plugins/libmodel.so";
    model.options = {{"width", "128"}, {"seed", "7"}};
    model.signature = {std::byte{1}, std::byte{0}, std::byte{255}};
    model.shapes = {{4, 4}, {4}};
    request.models = {model};
    FunctionBinding binding;
    binding.id = 5;
    binding.model = 2;
    binding.index = 1;
    binding.broadcast = {0, 1};
    binding.output_ops = {ReduceOp::Avg, ReduceOp::Gather};
    binding.update_ops = {ReduceOp::Sum};
    binding.sliceable = {1};
    binding.update_vars = {0};
    binding.read_vars = {1};
    binding.distributed = true;  // master-only fields: not sent
    binding.what = "call of function 'f'";
    request.functions = {binding};
    const DistributeRequest back = roundTrip(request);
    REQUIRE(back.models.size() == 1);
    CHECK(back.models[0].id == 2);
    CHECK(back.models[0].path == model.path);
    CHECK(back.models[0].options == model.options);
    CHECK(back.models[0].signature == model.signature);
    CHECK(back.models[0].shapes == model.shapes);
    REQUIRE(back.functions.size() == 1);
    const FunctionBinding& f = back.functions[0];
    CHECK(f.id == 5);
    CHECK(f.model == 2);
    CHECK(f.index == 1);
    CHECK(f.broadcast == binding.broadcast);
    CHECK(f.output_ops == binding.output_ops);
    CHECK(f.update_ops == binding.update_ops);
    CHECK(f.sliceable == binding.sliceable);
    CHECK(f.update_vars == binding.update_vars);
    CHECK(f.read_vars == binding.read_vars);
    CHECK_FALSE(f.distributed);
    CHECK(f.what.empty());
  }
}

// Steps read their requests into the last step's objects (no allocation once grown): a read
// must replace what the value held, whatever its size and capacity before.
TEST_CASE("byte I/O: reading into a used value replaces its contents", "[core]") {
  ByteWriter out;
  out(std::vector<int64_t>{7, 8}, std::string("ab"), std::vector<std::vector<int64_t>>{{1}, {}});
  out(std::vector<int64_t>{1, 2, 3, 4, 5}, std::string("a longer string than SSO holds"));
  ByteReader in(out.data(), out.size());
  std::vector<int64_t> v{1, 2, 3, 4, 5, 6};
  std::string s = "a string longer than the one that replaces it";
  std::vector<std::vector<int64_t>> nested{{9, 9, 9}, {9}, {9, 9}};
  in(v, s, nested);
  CHECK(v == std::vector<int64_t>{7, 8});
  CHECK(s == "ab");
  CHECK(nested == std::vector<std::vector<int64_t>>{{1}, {}});
  in(v, s);
  CHECK(v == std::vector<int64_t>{1, 2, 3, 4, 5});
  CHECK(s == "a longer string than SSO holds");
  CHECK(in.remaining() == 0);
}

TEST_CASE("byte I/O refuses every truncation of a payload", "[core]") {
  const std::vector<std::byte> bytes = bytesOf(someCallRequest());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    ByteReader in(bytes.data(), cut);
    INFO("payload cut to " << cut << " of " << bytes.size() << " bytes");
    CHECK_THROWS_AS(in.read<CallRequest>(), InternalError);
  }
  ByteReader in(bytes.data(), 3);
  CHECK_THROWS_WITH(in.read<CallRequest>(), Catch::Contains("reading 4 bytes at 0 of 3"));
}

TEST_CASE("byte I/O refuses a corrupt count before allocating for it", "[core]") {
  for (uint64_t count : {uint64_t{1} << 62, uint64_t{1} << 40, uint64_t{100}}) {
    ByteWriter out;
    out.put<uint64_t>(count);
    out.put<uint64_t>(0);  // 8 bytes follow: too few for any of these counts
    ByteReader strings(out.data(), out.size());
    CHECK_THROWS_WITH(strings.read<std::string>(), Catch::Contains("a count of"));
    ByteReader doubles(out.data(), out.size());
    CHECK_THROWS_WITH(doubles.read<std::vector<double>>(), Catch::Contains("a count of"));
    ByteReader nested(out.data(), out.size());
    CHECK_THROWS_WITH(nested.read<std::vector<std::string>>(), Catch::Contains("a count of"));
    ByteReader map(out.data(), out.size());
    CHECK_THROWS_WITH((map.read<std::map<int32_t, int32_t>>()), Catch::Contains("a count of"));
  }
}

}  // namespace
}  // namespace synk
