#include "synk/harness/base/progress.h"

#include <unistd.h>

#include <algorithm>

namespace synk::harness {

std::string formatDuration(double seconds) {
  const long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  }
  return buf;
}

Progress::Progress(int units, std::FILE* out)
    : out_(out), tty_(isatty(fileno(out)) == 1), total_(units) {
  start_ = std::chrono::steady_clock::now();
}

Progress::~Progress() {
  finish();
}

void Progress::begin(const std::string& what, int units) {
  what_ = what;
  running_ = units;
  run_start_ = std::chrono::steady_clock::now();
  draw();
}

void Progress::end() {
  busy_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count();
  done_ += running_;
  running_ = 0;
  partial_ = 0;
}

void Progress::partial(int done) {
  done = std::min(done, running_);
  if (done == partial_) return;
  // A log (not a terminal) gets a line per tenth of the run, not one per point.
  const bool tenth = total_ > 0 && (done_ + done) * 10 / total_ != (done_ + partial_) * 10 / total_;
  partial_ = done;
  if (tty_ || tenth) draw();
}

void Progress::note(const std::string& line) {
  if (tty_ && drawn_) std::fputs("\r\033[K", out_);
  std::fprintf(out_, "%s\n", line.c_str());
  drawn_ = false;
  std::fflush(out_);
}

void Progress::finish() {
  if (tty_ && drawn_) std::fputs("\r\033[K", out_);
  drawn_ = false;
  std::fflush(out_);
}

void Progress::draw() {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int done = done_ + partial_;
  const double busy =
      busy_seconds_ +
      (partial_ > 0
           ? std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count()
           : 0);
  std::string eta = "ETA --:--";
  if (done > 0) eta = "ETA " + formatDuration(busy / done * (total_ - done));
  const int percent = total_ > 0 ? done * 100 / total_ : 100;
  std::fprintf(out_, "%s[%3d%%] %s · %s elapsed · %s%s", tty_ ? "\r\033[K" : "", percent,
               what_.c_str(), formatDuration(elapsed).c_str(), eta.c_str(), tty_ ? "" : "\n");
  drawn_ = tty_;
  std::fflush(out_);
}

}  // namespace synk::harness
