#pragma once
// The progress line on stderr: where the sweep is, how long it has run, and when it should end
// (the mean time of the repetitions so far times those left). On a terminal one line is
// rewritten in place; otherwise (a log, CI) one line per repetition.
#include <chrono>
#include <cstdio>
#include <string>

namespace synk::harness {

class Progress {
 public:
  // units: repetitions to run in all (one per point and repetition).
  Progress(int units, std::FILE* out = stderr);
  ~Progress();
  void begin(const std::string& what, int units);  // about to run `units` of them
  void end();                                      // they finished
  // `done` of the running units have finished (a child counts them while it runs): redraws
  // the line when that changed, with the ETA from the rate so far.
  void partial(int done);
  void note(const std::string& line);  // a line that stays (skips, failures)
  void finish();                       // clears the live line

 private:
  void draw();
  std::FILE* out_;
  bool tty_;
  int total_, done_ = 0, running_ = 0, partial_ = 0;
  std::string what_;
  std::chrono::steady_clock::time_point start_, run_start_;
  double busy_seconds_ = 0;  // time spent in finished units
  bool drawn_ = false;
};

// "1:05", "12:00:03"
std::string formatDuration(double seconds);

}  // namespace synk::harness
