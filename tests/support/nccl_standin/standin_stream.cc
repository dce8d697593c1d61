#include "tests/support/nccl_standin/standin_stream.h"

#include <exception>
#include <map>

#include "tests/support/nccl_standin/standin_faults.h"

namespace synk::standin {
namespace {

std::mutex g_registry_mutex;
std::map<const Stream*, std::weak_ptr<Stream>>& registry() {
  static auto* streams = new std::map<const Stream*, std::weak_ptr<Stream>>();
  return *streams;
}

}  // namespace

std::shared_ptr<Stream> Stream::create(std::string name) {
  std::shared_ptr<Stream> stream(new Stream(std::move(name)));
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  registry()[stream.get()] = stream;
  return stream;
}

std::shared_ptr<Stream> Stream::find(cudaStream_t handle) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  const auto it = registry().find(reinterpret_cast<const Stream*>(handle));
  return it == registry().end() ? nullptr : it->second.lock();
}

Stream::Stream(std::string name) : name_(std::move(name)) {
  threadStarted();
  worker_ = std::thread([this] {
    run();
    threadEnded();
  });
}

Stream::~Stream() {
  stop();
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  registry().erase(this);
}

bool Stream::enqueue(Work work) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_.load()) return false;
  queue_.push_back(std::move(work));
  changed_.notify_all();
  return true;
}

bool Stream::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.empty() && !running_;
}

bool Stream::waitIdleFor(std::chrono::microseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, wait, [this] { return queue_.empty() && !running_; });
}

std::string Stream::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

void Stream::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true);
    queue_.clear();
    changed_.notify_all();
  }
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
}

void Stream::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return stopping_.load() || !queue_.empty(); });
    if (stopping_.load()) return;
    Work work = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    std::string error;
    try {
      work(*this);
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "unknown exception";
    }
    lock.lock();
    running_ = false;
    if (!error.empty() && !failed_.load()) {
      failure_ = error;
      failed_.store(true);
    }
    changed_.notify_all();
  }
}

}  // namespace synk::standin
