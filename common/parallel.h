// SPDX-License-Identifier: BSD-3-Clause
// A plain parallel-for over the host's cores, for host references and checks of arrays with
// billions of elements (a single core would take minutes).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace course {

// body(begin, end, worker) over [0, n) in contiguous chunks, one per hardware thread.
template <class Body>
void parallel_for(std::size_t n, Body body) {
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  if (n < (1u << 16) || workers == 1) {
    body(std::size_t{0}, n, 0u);
    return;
  }
  std::size_t chunk = (n + workers - 1) / workers;
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    std::size_t begin = std::min(n, w * chunk), end = std::min(n, begin + chunk);
    if (begin < end) threads.emplace_back(body, begin, end, w);
  }
  for (auto &t : threads) t.join();
}

// A pool of worker threads that live as long as the pool (the book's 14.7 keeps its CPU threads
// across time steps instead of creating them for each): run(tasks, body) calls body(task, worker)
// for every task in [0, tasks), each worker taking the next task as it finishes one (dynamic
// scheduling: rows of unequal cost balance), the calling thread working as worker 0. Returns when
// every task is done; an exception thrown by a task is rethrown (the first one). One run at a time.
class thread_pool {
 public:
  explicit thread_pool(unsigned workers = 0) {
    if (workers == 0) workers = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned w = 1; w < workers; ++w) threads_.emplace_back([this, w] { loop(w); });
  }
  ~thread_pool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto &t : threads_) t.join();
  }
  thread_pool(const thread_pool &) = delete;
  thread_pool &operator=(const thread_pool &) = delete;

  unsigned size() const { return unsigned(threads_.size()) + 1; }

  void run(std::size_t tasks, const std::function<void(std::size_t task, unsigned worker)> &body) {
    {
      std::lock_guard<std::mutex> lock(m_);
      body_ = &body;
      tasks_ = tasks;
      next_ = 0;
      busy_ = unsigned(threads_.size());
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    work(0);
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [this] { return busy_ == 0; });
    body_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work(unsigned worker) {
    for (;;) {
      const std::size_t task = next_.fetch_add(1);
      if (task >= tasks_) return;
      try {
        (*body_)(task, worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m_);
        if (!error_) error_ = std::current_exception();
        next_ = tasks_;  // the others stop taking tasks
      }
    }
  }
  void loop(unsigned worker) {
    unsigned long long seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work(worker);
      std::lock_guard<std::mutex> lock(m_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t, unsigned)> *body_ = nullptr;
  std::size_t tasks_ = 0;
  std::atomic<std::size_t> next_{0};
  unsigned busy_ = 0;
  unsigned long long generation_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
};

}  // namespace course
