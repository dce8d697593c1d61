#pragma once
// The stand-in device's "CUDA stream": a worker thread running queued work in FIFO order, so a
// device copy, an NCCL collective and a scale issued one after the other run in that order and
// later than the call that issued them, as on a GPU. Its address is the cudaStream_t handed to
// the stand-in NCCL, which looks it up (find()) instead of trusting the pointer: a job that
// enqueues after the device is gone gets an error, not a dangling stream.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace synk::standin {

class Stream {
 public:
  // Work sees the stream to ask stopping() inside its waits.
  using Work = std::function<void(const Stream&)>;

  static std::shared_ptr<Stream> create(std::string name);
  // The live stream behind a handle; null if there is none (never created, or destroyed).
  static std::shared_ptr<Stream> find(cudaStream_t handle);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t handle() { return reinterpret_cast<cudaStream_t>(this); }
  const std::string& name() const { return name_; }

  // Queues work; false once the stream is stopping.
  bool enqueue(Work work);
  // No queued or running work.
  bool idle() const;
  // Waits up to `wait` for idle(); true if idle.
  bool waitIdleFor(std::chrono::microseconds wait);
  // A work item threw: the stream is failed for good (a sticky CUDA error); why.
  bool failed() const { return failed_.load(); }
  std::string failure() const;
  // Set by stop(): every wait inside running work must end.
  bool stopping() const { return stopping_.load(); }
  // Drops queued work, makes running work end its waits, and joins the worker. Idempotent.
  void stop();

 private:
  explicit Stream(std::string name);
  void run();

  std::string name_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Work> queue_;
  bool running_ = false;  // the worker is executing an item
  std::atomic<bool> stopping_{false};
  std::atomic<bool> failed_{false};
  std::string failure_;
  std::thread worker_;
};

}  // namespace synk::standin
