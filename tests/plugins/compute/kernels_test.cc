// The host kernels of plugins/compute/kernels.h against values worked out independently.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "synk/plugins/compute/kernels.h"

namespace synk::compute {
namespace {

const Device kHost = hostDevice();

TEST_CASE("element-wise kernels and the deterministic sum", "[plugins][compute]") {
  std::vector<float> x = {1, -2, 3, -4};
  scale(kHost, x.data(), 4, -0.5f);
  CHECK(x == std::vector<float>{-0.5f, 1, -1.5f, 2});
  std::vector<float> y = {1, 1, 1, 1};
  axpy(kHost, 4, 2, x.data(), y.data());
  CHECK(y == std::vector<float>{0, 3, -2, 5});
  const float four = 4;
  divideBy(kHost, y.data(), y.data(), 4, &four);
  CHECK(y == std::vector<float>{0, 0.75f, -0.5f, 1.25f});
  fill(kHost, y.data(), 3, 7);
  CHECK(y == std::vector<float>{7, 7, 7, 1.25f});
  // A valid count leaves dst; -infinity or NaN (a bad label) copies src over it.
  const std::vector<float> src = {9, 8, 7, 6};
  for (const float count : {0.0f, 12.0f}) {
    restoreIfInvalid(kHost, &count, src.data(), y.data(), 4);
    CHECK(y == std::vector<float>{7, 7, 7, 1.25f});
  }
  for (const float count : {-std::numeric_limits<float>::infinity(), std::nanf("")}) {
    std::vector<float> z = {1, 2, 3, 4};
    restoreIfInvalid(kHost, &count, src.data(), z.data(), 3);
    CHECK(z == std::vector<float>{9, 8, 7, 4});
  }
  std::vector<float> many(100001);
  for (size_t i = 0; i < many.size(); ++i)
    many[i] = static_cast<float>(i % 7) - 3.0f;  // cycles of -3..3 sum to 0
  float total = 0;
  sum(kHost, many.data(), static_cast<int64_t>(many.size()), &total, nullptr);
  CHECK(total == -3.0f);  // 14285 cycles, then -3, -2, -1, 0, 1, 2
}

TEST_CASE("bias with relu, column sums, matrix copies and relu masks", "[plugins][compute]") {
  std::vector<float> z = {-1, 2, 7, 0.5f, -4, 7};  // 2 x 2 with ld 3 (column 2 untouched)
  const std::vector<float> bias = {0.5f, 1};
  addBias(kHost, z.data(), 2, 2, 3, bias.data(), false);
  CHECK(z == std::vector<float>{-0.5f, 3, 7, 1, -3, 7});
  addBias(kHost, z.data(), 2, 2, 3, bias.data(), true);
  CHECK(z == std::vector<float>{0, 4, 7, 1.5f, 0, 7});

  // 3 x 2 with ld 3: columns (1, 4, -2) and (2, 8, 0.5); column 2 is padding.
  const std::vector<float> x = {1, 2, 99, 4, 8, 99, -2, 0.5f, 99};
  std::vector<float> sums(2, -7);
  columnSum(kHost, x.data(), 3, 2, 3, 1, nullptr, sums.data());
  CHECK(sums == std::vector<float>{3, 10.5f});
  columnSum(kHost, x.data(), 3, 2, 3, -0.5f, sums.data(), sums.data());  // in place
  CHECK(sums == std::vector<float>{1.5f, 5.25f});
  columnSum(kHost, x.data(), 0, 2, 3, 1, nullptr, sums.data());
  CHECK(sums == std::vector<float>{0, 0});

  std::vector<float> copy(2 * 4, -1);  // 2 x 2 of x into ld 4
  copyMatrix(kHost, x.data() + 3, 3, copy.data(), 4, 2, 2);
  CHECK(copy == std::vector<float>{4, 8, -1, -1, -2, 0.5f, -1, -1});

  std::vector<float> a = {-1, 2, 0, -3, 4, 9};  // relu output, 2 x 2 with ld 3
  relu(kHost, a.data(), 2, 2, 3);
  CHECK(a == std::vector<float>{0, 2, 0, 0, 4, 9});
  std::vector<float> d = {10, 20, 30, 40};  // gradient at relu's output, ld 2
  reluBackward(kHost, a.data(), 3, d.data(), 2, 2, 2);
  CHECK(d == std::vector<float>{0, 20, 0, 40});
}

TEST_CASE("softmax cross-entropy gives loss, accuracy, gradient and metrics in one pass",
          "[plugins][compute]") {
  // Row 0: logits (0, ln 3) -> p = (1/4, 3/4), label 1: loss ln(4/3), correct.
  // Row 1: logits (2, 2), label 0: loss ln 2; the first maximum (0) is the prediction: correct.
  // Row 2: logits (0, ln 3), label 0: loss ln 4, wrong.
  const float ln3 = std::log(3.0f);
  const std::vector<float> logits = {0, ln3, 2, 2, 0, ln3};
  const std::vector<int32_t> labels = {1, 0, 0};
  std::vector<float> d(6);
  float mean = 0, accuracy = 0, rows = 0;
  std::vector<double> metrics = {1.0, 2.0, 3.0};
  CrossEntropyArgs args;
  args.logits = logits.data();
  args.rows = 3;
  args.classes = 2;
  args.ld = 2;
  args.labels = labels.data();
  args.dlogits = d.data();
  args.ld_d = 2;
  args.mean_loss = &mean;
  args.accuracy = &accuracy;
  args.rows_out = &rows;
  args.metrics_in = metrics.data();
  args.metrics_out = metrics.data();
  softmaxCrossEntropy(kHost, args);
  const double loss_sum = std::log(4.0 / 3.0) + std::log(2.0) + std::log(4.0);
  CHECK(mean == Approx(loss_sum / 3).epsilon(1e-6));
  CHECK(accuracy == Approx(2.0 / 3));
  CHECK(rows == 3);
  CHECK(d[0] == Approx(0.25));
  CHECK(d[1] == Approx(-0.25));
  CHECK(d[2] == Approx(-0.5));
  CHECK(d[3] == Approx(0.5));
  CHECK(d[4] == Approx(-0.75));
  CHECK(d[5] == Approx(0.75));
  CHECK(metrics[0] == Approx(1.0 + loss_sum).epsilon(1e-6));
  CHECK(metrics[1] == 4.0);
  CHECK(metrics[2] == 6.0);

  args.rows = 0;
  softmaxCrossEntropy(kHost, args);
  CHECK(mean == 0);  // an empty share weighs nothing in a row-weighted average
  CHECK(rows == 0);

  // The whole batch's labels (the mlp's rows exchange): the divisor is the batch's rows, and
  // another rank's bad label zeroes this rank's dlogits and makes the divisor -infinity.
  std::vector<int32_t> batch = {1, 0, 0, 1, 0, 0};
  args.rows = 3;
  args.all_labels = batch.data();
  args.all_rows = 6;
  args.batch_rows = 5;
  softmaxCrossEntropy(kHost, args);
  CHECK(rows == 5);
  CHECK(d[1] == Approx(-0.25));
  batch[4] = 2;
  softmaxCrossEntropy(kHost, args);
  CHECK(std::isinf(rows));
  CHECK(rows < 0);
  CHECK(d == std::vector<float>(6, 0.0f));
  CHECK(mean == Approx(loss_sum / 3).epsilon(1e-6));  // this rank's loss all the same
  args.all_labels = nullptr;

  const std::vector<int32_t> bad = {1, 2, 0};
  args.labels = bad.data();
  CHECK_THROWS_WITH(softmaxCrossEntropy(kHost, args), "label 2 of row 1 is outside [0, 2)");
}

}  // namespace
}  // namespace synk::compute
